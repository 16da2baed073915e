#include "jobs/run_policy.h"

#include <algorithm>
#include <chrono>

#include "jobs/defaults.h"

namespace dljob {
namespace {

RunDecision Decision(RunAction action, JobPhase phase, std::string reason, std::string message,
                     int64_t restarts) {
  return RunDecision{action, phase, std::move(reason), std::move(message), restarts, std::nullopt};
}

// A failed attempt (or a stuck one): restart the whole job while backoffLimit allows.
RunDecision RestartOrFail(const RunPolicy& policy, const RunObservation& seen,
                          const std::string& reason, const std::string& message) {
  int64_t limit = policy.backoff_limit.value_or(kDefaultBackoffLimit);
  if (seen.restarts < limit) {
    int64_t next = seen.restarts + 1;
    return Decision(RunAction::kRestart, JobPhase::kRestarting, reason,
                    message + "; restarting the whole job (restart " + std::to_string(next) +
                        " of " + std::to_string(limit) + ")",
                    next);
  }
  return Decision(
      RunAction::kFail, JobPhase::kFailed, kReasonBackoffLimitExceeded,
      message + "; no restarts left (spec.runPolicy.backoffLimit is " + std::to_string(limit) + ")",
      seen.restarts);
}

void RecheckAt(RunDecision& d, WallTime due) {
  d.recheck_at = d.recheck_at ? std::min(*d.recheck_at, due) : due;
}

}  // namespace

RunDecision DecideRun(const RunPolicy& policy, const RunObservation& seen, WallTime now) {
  using std::chrono::seconds;
  if (seen.suspended) {
    return Decision(
        RunAction::kSuspend, JobPhase::kSuspended, kReasonSuspended,
        "spec.runPolicy.suspend is true: the job's pods are deleted; set it to false to resume",
        seen.restarts);
  }
  if (seen.attempt == AttemptState::kSucceeded) {
    return Decision(RunAction::kSucceed, JobPhase::kSucceeded, seen.reason, seen.message,
                    seen.restarts);
  }
  std::optional<WallTime> active_due;
  if (policy.active_deadline_seconds && seen.started) {
    active_due = *seen.started + seconds(*policy.active_deadline_seconds);
    if (now >= *active_due) {
      return Decision(RunAction::kFailAndStop, JobPhase::kFailed, kReasonDeadlineExceeded,
                      "the job ran longer than spec.runPolicy.activeDeadlineSeconds (" +
                          std::to_string(*policy.active_deadline_seconds) + "s) and was stopped",
                      seen.restarts);
    }
  }
  RunDecision d;
  if (seen.attempt == AttemptState::kFailed) {
    d = RestartOrFail(policy, seen, seen.reason, seen.message);
  } else if (seen.attempt == AttemptState::kRunning && policy.progress_deadline_seconds &&
             seen.running_since) {
    WallTime since =
        std::max(*seen.running_since, seen.last_progress.value_or(*seen.running_since));
    WallTime due = since + seconds(*policy.progress_deadline_seconds);
    if (now >= due) {
      d = RestartOrFail(policy, seen, kReasonProgressDeadlineExceeded,
                        "no progress (no new metric line) for "
                        "spec.runPolicy.progressDeadlineSeconds (" +
                            std::to_string(*policy.progress_deadline_seconds) + "s)");
    } else {
      d.restarts = seen.restarts;
      RecheckAt(d, due);
    }
  } else {
    d.restarts = seen.restarts;
  }
  if (active_due && (d.action == RunAction::kNone || d.action == RunAction::kRestart)) {
    RecheckAt(d, *active_due);
  }
  return d;
}

}  // namespace dljob
