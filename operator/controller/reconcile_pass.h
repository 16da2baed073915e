// Reconciler::Pass: one reconcile's working state, shared by reconciler.cc and
// reconciler_steps.cc. Private to the reconciler; not thread-safe (one pass, one thread).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "jobs/conditions.h"
#include "jobs/spec_revision.h"
#include "operator/controller/children.h"
#include "operator/controller/reconciler.h"

namespace dljob::controller {

struct Reconciler::Pass {
  Json cached;      // the job as the cache holds it; never modified
  DLJob job;        // the defaulted copy whose status this pass rewrites
  DLJobStatus old;  // the status as read
  WallTime now;
  std::string now_s;
  std::vector<Json> pods;   // this incarnation's pods
  std::vector<Json> stale;  // pods from before a restart or a preemption
  std::optional<kube::Duration> requeue;
  bool warning = false;      // the transition deserves a Warning event
  bool delete_all = false;   // after the status write: delete every pod (restart, suspend)
  bool delete_live = false;  // after the status write: delete running pods (deadline)
  // After the status write: end the pass with this error, so the queue backs off (a bind failed).
  std::optional<Status> fail_after;
  bool status_written = false;  // WriteStatus sent a new status in this pass
  bool making = false;          // the pass went on to make the job's children and pods
  // An elastic job: the workers of the run its pods were made for (status.workers.desired), and
  // why the queue sized it as `job` now is (spec.gpus set to the queue's size: SizeElasticRun).
  int64_t run_workers = 0;
  std::string sized_why;

 private:
  std::optional<std::string> revision_;

 public:
  int64_t incarnation() const { return JobIncarnation(job.status); }
  // PodSpecRevision(job), computed on first use (the spec is settled by then: Load and
  // SizeElasticRun come first) and kept for the pass's other pods.
  const std::string& revision() {
    if (!revision_) revision_ = PodSpecRevision(job);
    return *revision_;
  }
  void RequeueIn(kube::Duration d) { requeue = requeue ? std::min(*requeue, d) : d; }
  void Set(JobPhase phase, const std::string& reason, const std::string& message, bool warn) {
    if (job.status.phase != phase) {
      TransitionTo(job.status, phase, reason, message, now_s);
    } else {
      SetCondition(job.status, PhaseName(phase), "True", reason, message, now_s);
    }
    warning = warn;
  }
  // The server refused a child for good (children.h IsRefusedForGood): sending it again cannot
  // help, so the job fails, with the server's answer in the condition and a Warning Event.
  void Refused(const std::string& reason, const std::string& message) {
    Set(JobPhase::kFailed, reason, message + "; a request the server refuses is not retried", true);
  }
};

// The phase a job shows from its first pass until a later step says more: Queued, reason Created.
inline constexpr char kCreatedReason[] = "Created";
inline constexpr char kCreatedMessage[] =
    "the operator is making the job's Service, ConfigMap, Secret and worker pods";

// The reason a job fails with when the server refuses to bind one of its pods.
inline constexpr char kFailedBindReason[] = "FailedBind";

// The condition a job carries while the queue has it suspended (True), and once it resumes.
inline constexpr char kPreemptedCondition[] = "Preempted";

// The reason and the message of the condition named after the phase ("" when none).
inline std::string PhaseReason(const DLJobStatus& s) {
  const Condition* c = FindCondition(s, PhaseName(s.phase));
  return c ? c->reason : "";
}
inline std::string PhaseMessage(const DLJobStatus& s) {
  const Condition* c = FindCondition(s, PhaseName(s.phase));
  return c ? c->message : "";
}

}  // namespace dljob::controller
