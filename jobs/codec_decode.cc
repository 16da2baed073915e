// DecodeTree: JSON tree -> DLJob, generic over the field tables (dljob_fields.h) through
// struct_codec.h: each field is read by its member's type, each object's unknown keys are
// reported (see codec.h).
#include <string>

#include "jobs/codec.h"
#include "jobs/dljob_fields.h"
#include "jobs/struct_codec.h"

namespace dljob {
namespace struct_codec {

void DecodePhase(JsonReader& r, const nlohmann::json& obj, std::string_view key,
                 const std::string& parent, JobPhase& phase) {
  std::string name;
  r.Read(obj, key, parent, name);
  if (std::optional<JobPhase> p = ParsePhase(name)) {
    phase = *p;
    return;
  }
  r.Error(JoinField(parent, key),
          "unknown phase " + Quote(name) + " (expected " + JoinOr(AllPhaseNames()) + ")");
}

}  // namespace struct_codec

DecodeResult DecodeTree(const nlohmann::json& tree) {
  DecodeResult result;
  JsonReader r(result.errors);
  if (tree.is_object()) {
    // A document without them must not read as if it had the defaults.
    result.job.api_version.clear();
    result.job.kind.clear();
  }
  if (!struct_codec::DecodeStruct(r, tree, "", result.job)) {
    result.errors.back().reason = "a DLJob " + result.errors.back().reason;
  }
  return result;
}

}  // namespace dljob
