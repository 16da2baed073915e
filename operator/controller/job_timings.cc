// See job_timings.h.
#include "operator/controller/job_timings.h"

#include <algorithm>

#include "base/time_format.h"
#include "jobs/conditions.h"

namespace dljob::controller {
namespace {

double SecondsBetween(WallTime from, WallTime to) {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

}  // namespace

JobTimings TimingsOf(const std::string& created, const DLJobStatus& before,
                     const DLJobStatus& after, WallTime now) {
  JobTimings t;
  std::optional<WallTime> creation = ParseRfc3339(created);
  if (!creation) return t;
  const std::string running = PhaseName(JobPhase::kRunning);
  if (after.phase == JobPhase::kRunning && before.phase != JobPhase::kRunning &&
      FindCondition(before, running) == nullptr) {
    t.start_seconds = SecondsBetween(*creation, now);
  }
  const bool was_waiting = before.phase == JobPhase::kUnset || before.phase == JobPhase::kQueued;
  const bool admitted = after.phase == JobPhase::kScheduled || after.phase == JobPhase::kRunning;
  if (was_waiting && admitted) {
    WallTime since = *creation;
    if (before.phase == JobPhase::kQueued) {
      const Condition* queued = FindCondition(before, PhaseName(JobPhase::kQueued));
      if (queued) since = ParseRfc3339(queued->last_transition_time).value_or(since);
    }
    t.queue_wait_seconds = SecondsBetween(since, now);
  }
  return t;
}

}  // namespace dljob::controller
