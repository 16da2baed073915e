#include "jobs/spec_revision.h"

#include <cstdint>
#include <cstdio>

#include "jobs/codec.h"

namespace dljob {
namespace {

// `tree` (the value at `path`) without the fields ShapesPods leaves out, and without an object
// that held only such fields (so `scheduling: {priority: 5}` and no `scheduling` agree).
nlohmann::json PodShaping(const nlohmann::json& tree, const std::string& path) {
  if (!tree.is_object()) return tree;
  nlohmann::json kept = nlohmann::json::object();
  for (const auto& [key, value] : tree.items()) {
    const std::string at = path + "." + key;
    if (!ShapesPods(at)) continue;
    nlohmann::json shaping = PodShaping(value, at);
    if (shaping.is_object() && shaping.empty() && !value.empty()) continue;
    kept[key] = std::move(shaping);
  }
  return kept;
}

bool Under(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '.');
}

}  // namespace

bool ShapesPods(std::string_view path) {
  return !Under(path, "spec.runPolicy") && path != "spec.scheduling.queue" &&
         path != "spec.scheduling.priority";
}

std::string PodSpecRevision(const DLJob& job) {
  nlohmann::json spec = PodShaping(EncodeTree(job).value("spec", nlohmann::json::object()), "spec");
  if (job.spec.elastic) spec.erase("gpus");
  uint64_t hash = 14695981039346656037ULL;  // FNV-1a, 64-bit
  for (unsigned char c : spec.dump()) {     // nlohmann::json keeps keys sorted: canonical
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace dljob
