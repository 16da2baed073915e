#include "jobs/spec_revision.h"

#include <cstdint>
#include <cstdio>

#include "jobs/codec.h"

namespace dljob {

std::string PodSpecRevision(const DLJob& job) {
  nlohmann::json spec = EncodeTree(job).value("spec", nlohmann::json::object());
  spec.erase("runPolicy");
  if (auto it = spec.find("scheduling"); it != spec.end() && it->is_object()) {
    it->erase("queue");
    it->erase("priority");
    if (it->empty()) spec.erase(it);
  }
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
