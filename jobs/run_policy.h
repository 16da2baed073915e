// Run policy: what spec.runPolicy says happens next to a job, given what its current attempt is
// doing. The one definition of the rules for suspend, activeDeadlineSeconds,
// progressDeadlineSeconds and restarts up to backoffLimit; the operator's reconciler and the
// local supervisor both call DecideRun and only carry out its decision (delete pods, signal
// mpirun, write the status).
//
// The rules, first match wins:
//   1. suspended                                   → kSuspend  (Suspended/"Suspended")
//   2. the attempt succeeded                       → kSucceed  (Succeeded; the attempt's reason)
//   3. now >= started + activeDeadlineSeconds      → kFailAndStop (Failed/"DeadlineExceeded");
//      never restarted: a restart could not finish in time either
//   4. the attempt failed                          → kRestart or kFail (see below)
//   5. the attempt runs and now >= the later of running_since and last_progress
//      + progressDeadlineSeconds                   → kRestart or kFail ("ProgressDeadlineExceeded")
//   6. otherwise                                   → kNone, recheck_at = the earliest deadline
// Restart or fail: while restarts < backoffLimit (unset: kDefaultBackoffLimit), kRestart
// (Restarting, restarts + 1, "…; restarting the whole job (restart N of L)"); then kFail
// (Failed/"BackoffLimitExceeded" as a Kubernetes Job says it, the cause first in the message:
// "…; no restarts left (spec.runPolicy.backoffLimit is L)"), on both backends alike.
// Every boundary is inclusive: a deadline is missed at exactly `due`.
//
// Pure: the caller measures the attempt and passes `now`, so tests need no clock. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/time_format.h"
#include "jobs/dljob_types.h"

namespace dljob {

enum class AttemptState {
  kNone,       // no attempt to judge (not started yet, or a restart is under way)
  kRunning,    // the job's processes run
  kSucceeded,  // the attempt ended well (the launcher, or every rank, exited 0)
  kFailed,     // the attempt ended badly (a rank, a worker or the launcher failed)
};

// What the caller saw of the job, at `now`.
struct RunObservation {
  AttemptState attempt = AttemptState::kNone;
  // kSucceeded, kFailed: how the backend names and tells the end, e.g. "WorkerFailed" and
  // "worker j-worker-1 exited with code 3 (Error)". The decision builds on them.
  std::string reason;
  std::string message;
  // When the job started (status.startTime); the active deadline counts from here. nullopt: it
  // has not started (or restarts counting after a resume), so the deadline is not checked.
  std::optional<WallTime> started;
  // kRunning: since when the attempt has been seen running. The progress deadline counts from
  // the later of this and last_progress; nullopt: the progress deadline is not checked.
  std::optional<WallTime> running_since;
  std::optional<WallTime> last_progress;  // the newest metric line, if any
  int64_t restarts = 0;                   // whole-job restarts so far (status.restarts)
  bool suspended = false;  // spec.runPolicy.suspend is true and the backend honours it
};

enum class RunAction {
  kNone,         // keep going
  kSuspend,      // stop every process; the job waits until resumed
  kRestart,      // stop every process and start the whole job again
  kFail,         // the job failed; what still runs is left to cleanPodPolicy
  kFailAndStop,  // the job failed because time ran out: stop whatever still runs
  kSucceed,      // the job is done
};

struct RunDecision {
  RunAction action = RunAction::kNone;
  std::optional<JobPhase> phase;  // the phase to move to; nullopt for kNone
  std::string reason;             // the phase condition's reason and message
  std::string message;
  int64_t restarts = 0;  // status.restarts after the action (one more on kRestart)
  // kNone and kRestart: the earliest deadline still ahead, when to look again even if nothing
  // changes; nullopt when no deadline applies.
  std::optional<WallTime> recheck_at;
};

inline constexpr char kReasonSuspended[] = "Suspended";
inline constexpr char kReasonDeadlineExceeded[] = "DeadlineExceeded";
inline constexpr char kReasonProgressDeadlineExceeded[] = "ProgressDeadlineExceeded";
inline constexpr char kReasonBackoffLimitExceeded[] = "BackoffLimitExceeded";

RunDecision DecideRun(const RunPolicy& policy, const RunObservation& seen, WallTime now);

}  // namespace dljob
