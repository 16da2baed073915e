#include "operator/controller/log_drain.h"

#include <algorithm>

#include "base/json_fields.h"
#include "base/time_format.h"
#include "kube/object_fields.h"
#include "operator/controller/builders.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

// When the launcher's container finished (the latest, should it have several).
std::optional<WallTime> FinishedAt(const Json& pod) {
  std::optional<WallTime> last;
  const Json& statuses = FieldOf(FieldOf(pod, "status"), "containerStatuses");
  if (!statuses.is_array()) return last;
  for (const Json& s : statuses) {
    std::optional<WallTime> t =
        ParseRfc3339(StringAt(FieldOf(FieldOf(s, "state"), "terminated"), "finishedAt"));
    if (t && (!last || *t > *last)) last = t;
  }
  return last;
}

}  // namespace

std::optional<kube::Duration> LauncherLogWait(const std::vector<Json>& pods,
                                              const LauncherLogEnded& ended, WallTime now,
                                              kube::Duration grace) {
  if (!ended) return std::nullopt;
  for (const Json& pod : pods) {
    if (kube::LabelOf(pod, kRoleLabel) != "launcher") continue;
    std::optional<bool> done = ended(kube::UidOf(pod));
    std::optional<WallTime> finished = FinishedAt(pod);
    if (done != false || !finished) return std::nullopt;
    kube::Duration left = std::chrono::ceil<kube::Duration>(*finished + grace - now);
    if (left <= kube::Duration::zero()) return std::nullopt;
    return std::min<kube::Duration>(left, std::chrono::seconds(1));
  }
  return std::nullopt;
}

}  // namespace dljob::controller
