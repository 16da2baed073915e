// Encoding a DLJob (see codec.h), generic over the field tables (dljob_fields.h) through
// struct_codec.h; keys in table order.
#include "jobs/codec.h"
#include "jobs/dljob_fields.h"
#include "jobs/struct_codec.h"
#include "jobs/yaml_tree.h"

namespace dljob {

using struct_codec::EncodeStruct;

nlohmann::json EncodeThroughput(const Throughput& throughput) {
  return nlohmann::json(EncodeStruct(throughput));
}

nlohmann::json EncodeTree(const DLJob& job) { return nlohmann::json(EncodeStruct(job)); }

std::string EncodeJson(const DLJob& job, int indent) {
  return EncodeStruct(job).dump(indent, ' ', /*ensure_ascii=*/false,
                                nlohmann::json::error_handler_t::replace);
}

std::string EncodeYaml(const DLJob& job) { return EmitYaml(EncodeStruct(job)); }

}  // namespace dljob
