#include "operator/controller/reconciler.h"

#include <algorithm>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/run_policy.h"
#include "jobs/spec_revision.h"
#include "jobs/validation.h"
#include "kube/object_fields.h"
#include "operator/controller/children.h"
#include "operator/controller/gang_binding.h"
#include "operator/controller/observation.h"
#include "operator/controller/queue_snapshot.h"
#include "operator/controller/reconcile_pass.h"
#include "scheduler/kube_objects.h"
#include "scheduler/placement_domain.h"

namespace dljob::controller {

namespace {

kube::Duration Until(WallTime due, WallTime now) {
  return std::max(kube::Duration(1), std::chrono::duration_cast<kube::Duration>(due - now));
}

}  // namespace

Reconciler::Reconciler(kube::Api& api, Clock& clock, Caches caches, ReconcilerOptions options,
                       SshKeyGenerator keys)
    : api_(api),
      clock_(clock),
      caches_(caches),
      options_(std::move(options)),
      keys_(std::move(keys)),
      events_(api, clock, options_.async_events) {}

Result<ReconcileResult> Reconciler::Reconcile(const std::string& key,
                                              std::optional<WallTime> last_progress) {
  std::optional<Json> cached = caches_.jobs.Get(key);
  if (!cached || IsDeleting(*cached)) {  // its children go with their ownerReferences
    written_.Forget(key);
    return ReconcileResult{};
  }
  Pass p;
  p.cached = written_.Newer(key, std::move(*cached));
  Result<ReconcileResult> r = Run(p, key, last_progress);
  if (!r.ok()) ShowFirstPhase(p, r.status());
  return r;
}

Result<ReconcileResult> Reconciler::Run(Pass& p, const std::string& key,
                                        std::optional<WallTime> last_progress) {
  FieldErrors errors = Load(p);
  if (IsFinished(p.old.phase)) return Finish(p);
  if (!errors.empty()) {
    p.Set(JobPhase::kFailed, "InvalidSpec",
          "the DLJob is invalid; fix it and create it again: " + JoinFieldErrors(errors), true);
    return Finish(p);
  }
  SizeElasticRun(p, key);
  for (Json& pod : caches_.pods.ByIndex(key)) {
    (IncarnationOf(pod) == p.incarnation() ? p.pods : p.stale).push_back(std::move(pod));
  }
  if (Resized(p)) {
    RestartForResize(p);
    return Finish(p);
  }
  Observation seen = Observe(p.job, p.pods);
  if (SpecChanged(p, seen)) {
    RestartForSpec(p);
    return Finish(p);
  }
  if (seen.state == JobState::kSucceeded) {
    // The launcher exited 0: its final metrics reach the status before the phase does.
    if (std::optional<kube::Duration> wait =
            LauncherLogWait(p.pods, options_.launcher_log_ended, p.now)) {
      p.RequeueIn(*wait);
      return Finish(p);
    }
  }
  if (caches_.nodes && p.stale.empty() && seen.state != JobState::kSucceeded) {
    if (std::optional<NodeLoss> loss =
            FindNodeLoss(p.pods, *caches_.nodes, options_.node_lost_after)) {
      if (loss->due <= p.now) {
        RestartForNodeLoss(p, loss->message);
        return Finish(p);
      }
      p.RequeueIn(Until(loss->due, p.now));
    }
  }
  if (caches_.nodes && p.stale.empty() && seen.state == JobState::kRunning) {
    if (std::optional<std::string> node = CordonedNodeUnder(p.pods, *caches_.nodes)) {
      if (MoveOffCordoned(p, *node)) return Finish(p);
    }
  }
  Result<std::optional<LostWorker>> lost = FindLost(p);
  if (!lost.ok()) return lost.status();
  // Nothing of this run has trained while its launcher has not started, so a worker lost before
  // then fails no attempt. Most often another client acted on a pod name the run before used:
  // kubectl drain before 1.23 retries its evictions by name without the pod's UID, and an
  // eviction of a Pending pod ignores the disruption budget, so a retry meets the new run's pod
  // of that name while the old ones are still writing their checkpoints.
  if (*lost && (seen.state == JobState::kPending || seen.state == JobState::kScheduled ||
                seen.state == JobState::kStarting)) {
    RestartAsDisruption(p, "WorkerLost",
                        (*lost)->message +
                            " before its launcher started; making the whole gang again (not a "
                            "failed attempt: backoffLimit is not spent)",
                        true);
    return Finish(p);
  }
  RunDecision decision =
      DecideRun(p.job.spec.run_policy, Observed(p, seen, *lost, last_progress), p.now);
  if (decision.recheck_at) p.RequeueIn(Until(*decision.recheck_at, p.now));
  if (decision.action != RunAction::kNone) {
    Apply(p, decision, seen);
    return Finish(p);
  }
  if (caches_.admission) {
    Admission admission = caches_.admission->Get(key);
    if (admission.verdict == Verdict::kPreempt) {
      Preempt(p, admission.message);
      Result<ReconcileResult> done = Finish(p);
      if (done.ok()) caches_.admission->Preempted(key, PhaseMessage(p.job.status));
      return done;
    }
  }
  return Converge(p);
}

// Decodes and defaults the cached job into the pass, and stamps the pass's time.
FieldErrors Reconciler::Load(Pass& p) {
  DecodeResult decoded = DecodeTree(p.cached);
  p.job = std::move(decoded.job);
  ApplyDefaults(p.job);
  p.old = p.job.status;
  p.job.status.restarts = p.job.status.restarts.value_or(0);
  if (p.job.metadata.generation) p.job.status.observed_generation = p.job.metadata.generation;
  p.now = clock_.Now();
  p.now_s = FormatRfc3339(p.now);
  if (IsFinished(p.old.phase)) return {};
  return decoded.errors.empty() ? Validate(p.job) : decoded.errors;
}

// The run goes on: its children made, the old incarnation's pods gone, the gang bound and the
// launcher started, and the phase saying how far it got.
Result<ReconcileResult> Reconciler::Converge(Pass& p) {
  if (WaitsWithoutPods(p)) return Finish(p);
  p.making = true;
  Result<bool> config = EnsureConfig(p);
  if (!config.ok()) return config.status();
  if (!*config) return Finish(p);

  if (!p.stale.empty()) {  // a restart or preemption is under way: the old pods go first
    for (Json& pod : p.stale) {
      if (Status s = DeletePod(p, pod); !s.ok()) return s;
    }
    if (caches_.nodes) p.RequeueIn(options_.node_lost_after);  // a node may be lost meanwhile
    return Finish(p);
  }
  Result<bool> pods = EnsurePods(p);
  if (!pods.ok()) return pods.status();
  if (!*pods) {
    Result<ReconcileResult> done = Finish(p);
    if (done.ok() && p.fail_after) return *p.fail_after;
    return done;
  }
  ShowProgress(p);
  return Finish(p);
}

// A job with no pods that the queue has not admitted, and that waits for something other than
// room on the nodes (its quota, its queue, its turn behind others), gets no
// Service, ConfigMap, Secret or pod yet, as Kueue keeps a workload suspended until it is
// admitted: thousands of waiting jobs would otherwise each hold pods that only say they wait,
// and a cluster autoscaler would add nodes for jobs their quota holds back. The pass that finds
// it admitted creates them all and binds. A job waiting for room creates its pending workers, so
// that an autoscaler sees what would fit.
bool Reconciler::WaitsWithoutPods(Pass& p) {
  if (!caches_.admission || !p.pods.empty() || !p.stale.empty()) return false;
  Admission a =
      caches_.admission->Get(kube::ObjectKey(p.job.metadata.namespace_, p.job.metadata.name));
  switch (a.verdict) {
    case Verdict::kAdmitted:
    case Verdict::kPreempt:
      return false;
    case Verdict::kWaiting:
      if (a.reason == "Unschedulable") return false;
      break;
    case Verdict::kUnknown:  // the queue has not judged it: made as without a queue
      return false;
  }
  ShowWaiting(p, a);
  return true;
}

// The phase of a job whose pods are all there: queued, bound, starting or running (again, after
// a preemption). A restart keeps its Restarting phase until mpirun runs.
void Reconciler::ShowProgress(Pass& p) {
  Observation now = Observe(p.job, p.pods);
  p.job.status.workers = now.workers;
  p.job.status.placement = now.placement;
  bool restarting = p.job.status.phase == JobPhase::kRestarting;
  switch (now.state) {
    case JobState::kRunning: {
      const std::string running =
          "mpirun is running on " + std::to_string(now.workers.desired) + " workers";
      const Condition* preempted = FindCondition(p.job.status, kPreemptedCondition);
      if (preempted && preempted->status == "True") {
        const std::string message =
            running + " again after " + std::to_string(p.job.status.preemptions.value_or(0)) +
            " preemption(s), " +
            (p.job.spec.checkpoint ? "from its checkpoint" : "from the start (no spec.checkpoint)");
        SetCondition(p.job.status, kPreemptedCondition, "False", "Resumed", message, p.now_s);
        p.Set(JobPhase::kRunning, "Resumed", message, false);
      } else if (p.old.phase != JobPhase::kRunning || PhaseReason(p.old) != "Resumed") {
        p.Set(JobPhase::kRunning, "Running", running, false);
      }
      break;
    }
    case JobState::kStarting:
      if (!restarting) {
        p.Set(JobPhase::kScheduled, "WorkersReady",
              "every worker is Ready; the launcher is starting", false);
      }
      break;
    case JobState::kScheduled:
      if (!restarting) {
        p.Set(JobPhase::kScheduled, "WorkersBound",
              "every worker is bound on " + PlacedOn(now.placement) + "; " + now.message, false);
      }
      break;
    default:
      if (!restarting) p.Set(JobPhase::kQueued, now.reason, now.message, false);
  }
}

// Where the gang is: its nodes' topology (scheduler/placement_domain.h) when the Node cache knows
// every one of them, else their names.
std::string Reconciler::PlacedOn(const std::vector<PlacementEntry>& placement) const {
  std::vector<scheduler::Node> nodes;
  std::string names;
  for (const PlacementEntry& e : placement) {
    names += (names.empty() ? "" : ", ") + e.node;
    std::optional<Json> node = caches_.nodes ? caches_.nodes->Get(e.node) : std::nullopt;
    if (node) nodes.push_back(scheduler::SchedulerNodeOf(*node));
  }
  if (nodes.size() != placement.size()) return names;
  std::string where = scheduler::DescribePlacementDomain(nodes, options_.rack_label);
  return placement.size() == 1 ? where : where + ": " + names;
}

// A worker the cache lacks may be one this operator made a moment ago (the job's informer ahead
// of the pods' one): only the server's 404 (or a pod of another incarnation, or one being
// deleted) says it is lost. While a restart or a preemption is under way (the old run's pods
// still going) there is no attempt to lose.
Result<std::optional<LostWorker>> Reconciler::FindLost(const Pass& p) {
  if (!p.stale.empty()) return std::optional<LostWorker>();
  std::optional<LostWorker> lost = FindLostWorker(p.job, p.pods);
  if (!lost || !lost->missing) return lost;
  const std::string& ns = p.job.metadata.namespace_;
  kube::ApiResult<Json> now = api_.Get(kube::resources::kPods, ns, lost->pod);
  if (!now.ok() && !now.error().IsNotFound()) {
    return now.error().ToStatus().WithContext("reading pod " + ns + "/" + lost->pod);
  }
  if (now.ok() && IncarnationOf(*now) == p.incarnation() && !IsDeleting(*now)) {
    return std::optional<LostWorker>();
  }
  return lost;
}

// What the run policy gets to judge. While old pods are still going away (a restart under
// way) there is no attempt; a worker lost after its gang was bound fails the attempt like a
// failed one; the progress deadline counts from when the job was last marked Running, and only
// while it still is.
RunObservation Reconciler::Observed(const Pass& p, const Observation& seen,
                                    const std::optional<LostWorker>& lost,
                                    std::optional<WallTime> last_progress) {
  RunObservation o;
  o.suspended = p.job.spec.run_policy.suspend.value_or(false);
  o.restarts = p.job.status.restarts.value_or(0);
  o.started = ParseRfc3339(p.job.status.start_time);
  o.last_progress = last_progress;
  if (!p.stale.empty()) return o;
  if (lost && seen.state != JobState::kSucceeded && seen.state != JobState::kFailed) {
    o.attempt = AttemptState::kFailed;
    o.reason = "WorkerLost";
    o.message = lost->message;
    return o;
  }
  switch (seen.state) {
    case JobState::kSucceeded:
      o.attempt = AttemptState::kSucceeded;
      o.reason = "Succeeded";
      o.message = "the launcher's mpirun exited 0";
      break;
    case JobState::kFailed:
      o.attempt = AttemptState::kFailed;
      o.reason = seen.reason;
      o.message = seen.message;
      break;
    case JobState::kRunning:
      o.attempt = AttemptState::kRunning;
      if (p.old.phase == JobPhase::kRunning) {
        const Condition* running = FindCondition(p.old, PhaseName(JobPhase::kRunning));
        o.running_since =
            running ? ParseRfc3339(running->last_transition_time).value_or(p.now) : p.now;
      }
      break;
    default:
      break;
  }
  return o;
}

// Carries out a run-policy decision: the status now, the pod deletions after it is written.
void Reconciler::Apply(Pass& p, const RunDecision& d, const Observation& seen) {
  bool warn = d.action != RunAction::kSuspend && d.action != RunAction::kSucceed;
  p.job.status.restarts = d.restarts;
  p.Set(*d.phase, d.reason, d.message, warn);
  switch (d.action) {
    case RunAction::kSuspend:
      p.job.status.start_time.clear();  // the active deadline counts again from the resume
      StopAllPods(p);
      break;
    case RunAction::kRestart:
      p.job.status.placement.clear();  // the next incarnation's gang is not bound yet
      p.delete_all = true;
      break;
    case RunAction::kFailAndStop:
      p.delete_live = true;
      break;
    case RunAction::kSucceed:
      p.job.status.workers = seen.workers;
      break;
    case RunAction::kFail:
    case RunAction::kNone:
      break;
  }
}

// The run ends with every pod (a suspension, a preemption, a restart for a changed spec): none
// ready or placed any more, and every pod deleted once the status is written.
void Reconciler::StopAllPods(Pass& p) {
  p.job.status.workers = WorkerCounts{WorkerCount(p.job), 0, 0};
  p.job.status.placement.clear();
  p.delete_all = true;
}

// Whether the job's pods run an older spec than the job now has (jobs/spec_revision.h): any of
// this incarnation's pods made from another revision. Pods that record none (made by an operator
// before revisions) are taken as current; so is everything while the job is suspended (it has no
// pods), finished or a restart is under way, and a succeeded attempt is let finish.
bool Reconciler::SpecChanged(Pass& p, const Observation& seen) {
  if (!p.stale.empty() || seen.state == JobState::kSucceeded) return false;
  const std::string& revision = p.revision();
  return std::any_of(p.pods.begin(), p.pods.end(), [&](const Json& pod) {
    const std::string made_from = SpecRevisionOf(pod);
    return !made_from.empty() && made_from != revision && !IsDeleting(pod);
  });
}

// Applies a changed spec the only way a gang can take it: the whole job stops (its pods deleted,
// which ask the ranks to checkpoint on SIGTERM) and starts again with the new spec, through the
// queue when there is one. Counted in status.specRestarts, not in restarts: it spends nothing of
// backoffLimit, and the active deadline keeps counting from the job's first run.
void Reconciler::RestartForSpec(Pass& p) {
  DLJobStatus& s = p.job.status;
  s.spec_restarts = s.spec_restarts.value_or(0) + 1;
  std::string generation = p.job.metadata.generation
                               ? " (generation " + std::to_string(*p.job.metadata.generation) + ")"
                               : "";
  p.Set(JobPhase::kRestarting, "SpecChanged",
        "the job's spec changed" + generation + "; restarting the whole job with it, " +
            (p.job.spec.checkpoint ? "from its checkpoint" : "from the start (no spec.checkpoint)"),
        false);
  StopAllPods(p);
}

// An elastic job's run is as big as the queue made it: the size it admitted or resized the job
// to (its plan's workers), else the size the run was made with (status.workers.desired), else the
// most the job asks for (also without a queue). The pass works on the job with spec.gpus set to
// that size, so every child (the workers, the hostfile, mpirun's -np, the disruption budget) is
// made for it; the spec revision leaves an elastic job's spec.gpus out (jobs/spec_revision.h).
void Reconciler::SizeElasticRun(Pass& p, const std::string& key) const {
  const std::optional<WorkerRange> range = ElasticWorkers(p.job);
  if (!range) return;
  p.run_workers = p.old.workers && range->Contains(p.old.workers->desired) ? p.old.workers->desired
                                                                           : range->max;
  int64_t workers = p.run_workers;
  if (caches_.admission) {
    const Admission a = caches_.admission->Get(key);
    const auto planned = static_cast<int64_t>(a.placement.worker_nodes.size());
    if (a.verdict == Verdict::kAdmitted && range->Contains(planned)) {
      workers = planned;
      p.sized_why = a.message;
    }
  }
  p.job.spec.gpus = workers * p.job.spec.gpus_per_worker.value_or(1);
}

// Only a gang that holds GPUs (a worker bound) is restarted; pending workers are just made to the
// new size (EnsurePods).
bool Reconciler::Resized(const Pass& p) {
  if (!p.job.spec.elastic || !p.stale.empty() || WorkerCount(p.job) == p.run_workers) return false;
  return std::any_of(p.pods.begin(), p.pods.end(), [](const Json& pod) {
    return kube::LabelOf(pod, kRoleLabel) == "worker" && !kube::NodeNameOf(pod).empty();
  });
}

// Counted in status.resizes (a new incarnation: every pod of the old size goes, and the ranks
// checkpoint on SIGTERM), spending nothing of backoffLimit; an Event says from what to what and
// why. The next run's gang is placed whole at the new size and resumes from the checkpoint.
void Reconciler::RestartForResize(Pass& p) {
  DLJobStatus& s = p.job.status;
  s.resizes = s.resizes.value_or(0) + 1;
  const int64_t to = WorkerCount(p.job);
  const std::string why = p.sized_why.empty()
                              ? "the queue gave it " + std::to_string(to) + " workers (it ran on " +
                                    std::to_string(p.run_workers) + ")"
                              : p.sized_why;
  p.Set(JobPhase::kRestarting, "Resized",
        why + "; restarting the whole job on " + std::to_string(to) + " workers, " +
            (p.job.spec.checkpoint ? "from its checkpoint" : "from the start (no spec.checkpoint)"),
        false);
  StopAllPods(p);
}

// Restarts the whole job away from a lost node, as a changed spec does (RestartForSpec): counted
// in status.disruptionRestarts, spending nothing of backoffLimit. The pods on the lost node are
// deleted at once (DeletePod); the next gang is placed on nodes that are Ready.
void Reconciler::RestartForNodeLoss(Pass& p, const std::string& why) {
  RestartAsDisruption(
      p, "NodeLost",
      why + "; restarting the whole job on the nodes that remain, " +
          (p.job.spec.checkpoint ? "from its checkpoint" : "from the start (no spec.checkpoint)"),
      true);
}

void Reconciler::RestartAsDisruption(Pass& p, const char* reason, const std::string& message,
                                     bool warn) {
  DLJobStatus& s = p.job.status;
  s.disruption_restarts = s.disruption_restarts.value_or(0) + 1;
  p.Set(JobPhase::kRestarting, reason, message, warn);
  StopAllPods(p);
}

// Moves the whole job off a cordoned node, as a lost node restarts it (RestartForNodeLoss), once
// the other nodes can hold it without its own pods: its pods deleted gracefully, so its ranks
// checkpoint on SIGTERM, and the gang placed again on schedulable nodes. Until it fits, the job
// runs on where it is and looks again after queued_retry. Whether it moved.
bool Reconciler::MoveOffCordoned(Pass& p, const std::string& node) {
  std::vector<std::string> own;
  for (const Json& pod : p.pods) own.push_back(p.job.metadata.namespace_ + "/" + kube::NameOf(pod));
  if (Status fits = caches_.gpus.FitsWithout(p.job, own); !fits.ok()) {
    p.RequeueIn(options_.queued_retry);
    return false;
  }
  RestartAsDisruption(
      p, "NodeCordoned",
      "node " + node +
          " is cordoned (kubectl cordon or drain); moving the whole job to other nodes, " +
          (p.job.spec.checkpoint ? "from its checkpoint" : "from the start (no spec.checkpoint)"),
      false);
  return true;
}

// Suspends the job for the queue, as Apply does for runPolicy.suspend, and accounts for the run.
void Reconciler::Preempt(Pass& p, const std::string& why) {
  DLJobStatus& s = p.job.status;
  if (std::optional<WallTime> since = RunStart(p.old)) {
    int64_t seconds = std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::seconds>(p.now - *since).count());
    s.attained_gpu_seconds =
        s.attained_gpu_seconds.value_or(0) + seconds * p.job.spec.gpus.value_or(0);
  }
  s.preemptions = s.preemptions.value_or(0) + 1;
  const std::string message =
      why + (p.job.spec.checkpoint
                 ? "; it resumes from its checkpoint when the queue admits it again"
                 : "; it has no spec.checkpoint, so it starts over when the queue admits it again");
  p.Set(JobPhase::kQueued, "Preempted", message, true);
  SetCondition(s, kPreemptedCondition, "True", "Preempted", message, p.now_s);
  s.start_time.clear();
  StopAllPods(p);
}

}  // namespace dljob::controller
