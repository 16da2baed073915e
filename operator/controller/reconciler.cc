#include "operator/controller/reconciler.h"

#include <algorithm>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/validation.h"
#include "operator/controller/children.h"
#include "operator/controller/gang_binding.h"
#include "operator/controller/observation.h"
#include "operator/controller/reconcile_pass.h"

namespace dljob::controller {

using std::chrono::seconds;


namespace {

Duration Until(WallTime due, WallTime now) {
  return std::max(Duration(1), std::chrono::duration_cast<Duration>(due - now));
}

}  // namespace

Reconciler::Reconciler(kube::Api& api, const Clock& clock, Caches caches,
                       ReconcilerOptions options, SshKeyGenerator keys)
    : api_(api), clock_(clock), caches_(caches), options_(std::move(options)),
      keys_(std::move(keys)), events_(api, clock) {}

Result<ReconcileResult> Reconciler::Reconcile(const std::string& key,
                                              std::optional<WallTime> last_progress) {
  std::optional<Json> cached = caches_.jobs.Get(key);
  if (!cached || IsDeleting(*cached)) return ReconcileResult{};  // children go with ownerRefs
  Pass p;
  p.cached = std::move(*cached);
  DecodeResult decoded = DecodeTree(p.cached);
  p.job = std::move(decoded.job);
  ApplyDefaults(p.job);
  p.old = p.job.status;
  p.job.status.restarts = p.job.status.restarts.value_or(0);
  p.now = clock_.Now();
  p.now_s = FormatRfc3339(p.now);
  const RunPolicy& policy = p.job.spec.run_policy;

  if (IsFinished(p.old.phase)) return Finish(p);
  FieldErrors errors = decoded.errors.empty() ? Validate(p.job) : decoded.errors;
  if (!errors.empty()) {
    p.Set(JobPhase::kFailed, "InvalidSpec",
          "the DLJob is invalid; fix it and create it again: " + JoinFieldErrors(errors), true);
    return Finish(p);
  }
  for (Json& pod : caches_.pods.ByIndex(key)) {
    (IncarnationOf(pod) == p.incarnation() ? p.pods : p.stale).push_back(std::move(pod));
  }
  if (policy.suspend.value_or(false)) {
    p.Set(JobPhase::kSuspended, "Suspended",
          "spec.runPolicy.suspend is true: the job's pods are deleted; set it to false to resume",
          false);
    p.job.status.start_time.clear();  // the active deadline counts again from the resume
    p.job.status.workers = WorkerCounts{WorkerCount(p.job), 0, 0};
    p.job.status.placement.clear();
    p.delete_all = true;
    return Finish(p);
  }
  if (policy.active_deadline_seconds && !p.job.status.start_time.empty()) {
    if (std::optional<WallTime> start = ParseRfc3339(p.job.status.start_time)) {
      WallTime due = *start + seconds(*policy.active_deadline_seconds);
      if (p.now >= due) {
        p.Set(JobPhase::kFailed, "DeadlineExceeded",
              "the job ran longer than spec.runPolicy.activeDeadlineSeconds (" +
                  std::to_string(*policy.active_deadline_seconds) + "s); its pods were stopped",
              true);
        p.delete_live = true;
        return Finish(p);
      }
      p.RequeueIn(Until(due, p.now));
    }
  }
  Result<bool> config = EnsureConfig(p);
  if (!config.ok()) return config.status();
  if (!*config) return Finish(p);

  if (!p.stale.empty()) {  // a restart is under way: the old pods must be gone first
    for (const Json& pod : p.stale) {
      if (IsDeleting(pod)) continue;
      std::string name = pod["metadata"].value("name", "");
      kube::ApiResult<Json> r = api_.Delete(kube::resources::kPods, p.job.metadata.namespace_, name);
      if (!r.ok() && !r.error().IsNotFound()) return r.error().ToStatus().WithContext("deleting pod " + name);
    }
    return Finish(p);
  }
  Observation seen = Observe(p.job, p.pods);
  if (seen.state == JobState::kFailed) {
    RestartOrFail(p, seen.reason, seen.message);
    return Finish(p);
  }
  if (seen.state == JobState::kSucceeded) {
    p.Set(JobPhase::kSucceeded, "Succeeded", "the launcher's mpirun exited 0", false);
    p.job.status.workers = seen.workers;
    return Finish(p);
  }
  if (seen.state == JobState::kRunning && policy.progress_deadline_seconds &&
      p.old.phase == JobPhase::kRunning) {
    const Condition* running = FindCondition(p.old, PhaseName(JobPhase::kRunning));
    WallTime since = p.now;
    if (running) since = ParseRfc3339(running->last_transition_time).value_or(p.now);
    if (last_progress) since = std::max(since, *last_progress);
    WallTime due = since + seconds(*policy.progress_deadline_seconds);
    if (p.now >= due) {
      RestartOrFail(p, "ProgressDeadlineExceeded",
                    "no progress (no new metric line) for spec.runPolicy.progressDeadlineSeconds (" +
                        std::to_string(*policy.progress_deadline_seconds) + "s)");
      return Finish(p);
    }
    p.RequeueIn(Until(due, p.now));
  }
  Result<bool> pods = EnsurePods(p);
  if (!pods.ok()) return pods.status();
  if (!*pods) return Finish(p);

  Observation now = Observe(p.job, p.pods);
  p.job.status.workers = now.workers;
  p.job.status.placement = now.placement;
  bool restarting = p.job.status.phase == JobPhase::kRestarting;
  switch (now.state) {
    case JobState::kRunning:
      p.Set(JobPhase::kRunning, "Running",
            "mpirun is running on " + std::to_string(now.workers.desired) + " workers", false);
      break;
    case JobState::kStarting:
      if (!restarting) {
        p.Set(JobPhase::kScheduled, "WorkersReady", "every worker is Ready; the launcher is starting",
              false);
      }
      break;
    case JobState::kScheduled:
      if (!restarting) p.Set(JobPhase::kScheduled, "WorkersBound", now.message, false);
      break;
    default:
      if (!restarting) p.Set(JobPhase::kQueued, now.reason, now.message, false);
  }
  return Finish(p);
}

void Reconciler::RestartOrFail(Pass& p, const std::string& reason, const std::string& message) {
  int64_t done = p.job.status.restarts.value_or(0);
  int64_t limit = p.job.spec.run_policy.backoff_limit.value_or(kDefaultBackoffLimit);
  if (done < limit) {
    p.job.status.restarts = done + 1;
    p.Set(JobPhase::kRestarting, reason,
          message + "; restarting the whole job (restart " + std::to_string(done + 1) + " of " +
              std::to_string(limit) + ")",
          true);
    p.delete_all = true;
    return;
  }
  p.Set(JobPhase::kFailed, "BackoffLimitExceeded",
        message + "; no restarts left (spec.runPolicy.backoffLimit is " + std::to_string(limit) +
            ")",
        true);
}

}  // namespace dljob::controller
