// The DLQueue codec (dlqueue_codec.h): the document steps of document_codec.h and the field-table
// templates of struct_codec.h over the rows of dlqueue_fields.h.
#include "jobs/dlqueue_codec.h"

#include <utility>

#include "jobs/dlqueue_fields.h"
#include "jobs/document_codec.h"
#include "jobs/struct_codec.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

QueueDecodeResult Failed(ParsedDocument doc) {
  QueueDecodeResult result;
  result.errors = std::move(doc.errors);
  return result;
}

}  // namespace

QueueDecodeResult DecodeQueueTree(const nlohmann::json& tree) {
  QueueDecodeResult result;
  JsonReader r(result.errors);
  if (tree.is_object()) {
    // A document without them must not read as if it had the defaults.
    result.queue.api_version.clear();
    result.queue.kind.clear();
  }
  if (!struct_codec::DecodeStruct(r, tree, "", result.queue)) {
    result.errors.back().reason = "a DLQueue " + result.errors.back().reason;
  }
  return result;
}

QueueDecodeResult DecodeQueueYaml(std::string_view text) {
  ParsedDocument doc = ParseYamlDocument(text, kQueueKind, "apiVersion, kind, metadata, spec");
  if (!doc.errors.empty()) return Failed(std::move(doc));
  QueueDecodeResult result = DecodeQueueTree(doc.tree);
  result.positions = std::move(doc.positions);
  LocateErrors(result.positions, result.errors);
  return result;
}

QueueDecodeResult DecodeQueueJson(std::string_view text) {
  ParsedDocument doc = ParseJsonDocument(text);
  if (!doc.errors.empty()) return Failed(std::move(doc));
  return DecodeQueueTree(doc.tree);
}

QueueDecodeResult DecodeQueueAny(std::string_view text) {
  return StartsLikeJson(text) ? DecodeQueueJson(text) : DecodeQueueYaml(text);
}

nlohmann::json EncodeQueueTree(const DLQueue& queue) {
  return nlohmann::json(struct_codec::EncodeStruct(queue));
}

std::string EncodeQueueJson(const DLQueue& queue, int indent) {
  return struct_codec::EncodeStruct(queue).dump(indent, ' ', /*ensure_ascii=*/false,
                                                nlohmann::json::error_handler_t::replace);
}

std::string EncodeQueueYaml(const DLQueue& queue) {
  return EmitYaml(struct_codec::EncodeStruct(queue));
}

}  // namespace dljob
