#include "operator/controller/log_drain.h"

#include <algorithm>

#include "base/time_format.h"
#include "operator/controller/builders.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& Object(const Json& j, const char* key) {
  static const Json kEmpty = Json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

// When the launcher's container finished (the latest, should it have several).
std::optional<WallTime> FinishedAt(const Json& pod) {
  std::optional<WallTime> last;
  auto statuses = Object(pod, "status").find("containerStatuses");
  if (statuses == Object(pod, "status").end() || !statuses->is_array()) return last;
  for (const Json& s : *statuses) {
    std::optional<WallTime> t =
        ParseRfc3339(Str(Object(Object(s, "state"), "terminated"), "finishedAt"));
    if (t && (!last || *t > *last)) last = t;
  }
  return last;
}

}  // namespace

std::optional<Duration> LauncherLogWait(const std::vector<Json>& pods,
                                        const LauncherLogEnded& ended, WallTime now,
                                        Duration grace) {
  if (!ended) return std::nullopt;
  for (const Json& pod : pods) {
    if (Str(Object(Object(pod, "metadata"), "labels"), kRoleLabel) != "launcher") continue;
    std::optional<bool> done = ended(Str(Object(pod, "metadata"), "uid"));
    std::optional<WallTime> finished = FinishedAt(pod);
    if (done != false || !finished) return std::nullopt;
    Duration left = std::chrono::ceil<Duration>(*finished + grace - now);
    if (left <= Duration::zero()) return std::nullopt;
    return std::min<Duration>(left, std::chrono::seconds(1));
  }
  return std::nullopt;
}

}  // namespace dljob::controller
