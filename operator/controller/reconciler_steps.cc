// The steps Reconciler::Reconcile (reconciler.cc) is made of: children, pods, status, clean-up.
#include "base/json_fields.h"
#include "base/time_format.h"
#include "jobs/codec.h"
#include "kube/object_fields.h"
#include "operator/controller/children.h"
#include "operator/controller/gang_binding.h"
#include "operator/controller/observation.h"
#include "operator/controller/reconcile_pass.h"

namespace dljob::controller {

using kube::ObjectKey;

namespace {

using kube::NameOf;
using kube::NodeNameOf;
using kube::ObjectKey;

// Not Succeeded or Failed (whether being deleted or not).
bool Unfinished(const Json& pod) {
  std::string phase = StringAt(FieldOf(pod, "status"), "phase");
  return phase != "Succeeded" && phase != "Failed";
}

// Binds the launcher to the first worker's node unless it is bound already. Launchers are
// created bound (EnsureLauncher); one found unbound was made by an operator release that bound
// it after creating it, and stopped in between: nothing else would ever bind it, and it would
// stay Pending forever. A launcher the cache shows unbound may just be newer than the cache:
// unless `fresh` (the create's answer), the server is asked first, as BindGang does for workers.
// A bind the server refuses for good is not an error: `refusal` says why, for the job's condition.
Status BindLauncher(kube::Api& api, const DLJob& job, const std::vector<Json>& workers,
                    Json& launcher, bool fresh, std::string& refusal) {
  if (!NodeNameOf(launcher).empty()) return Status::Ok();
  std::string node = workers.empty() ? "" : NodeNameOf(workers[0]);
  if (node.empty()) return Status::Ok();
  const std::string& ns = job.metadata.namespace_;
  if (!fresh) {
    kube::ApiResult<Json> now = api.Get(kube::resources::kPods, ns, NameOf(launcher));
    if (!now.ok() && now.error().IsNotFound()) return Status::Ok();  // the next event tells
    if (!now.ok()) return now.error().ToStatus().WithContext("reading pod " + NameOf(launcher));
    if (!NodeNameOf(*now).empty()) {
      launcher["spec"]["nodeName"] = NodeNameOf(*now);
      return Status::Ok();
    }
  }
  kube::ApiResult<Json> bound = api.Bind(ns, NameOf(launcher), node);
  if (!bound.ok() && IsRefusedForGood(bound.error()) && !bound.error().IsNotFound()) {
    refusal = RefusalMessage("bind", "Pod", ns, NameOf(launcher), bound.error());
    return Status::Ok();
  }
  if (!bound.ok() && !bound.error().IsConflict()) {  // 409: bound meanwhile
    return bound.error().ToStatus().WithContext("binding the launcher to node " + node);
  }
  launcher["spec"]["nodeName"] = node;
  return Status::Ok();
}

}  // namespace

Result<ReconcileResult> Reconciler::Finish(Pass& p) {
  if (p.job.status.phase == JobPhase::kUnset) {  // nothing said more yet (waiting for the cache)
    p.Set(JobPhase::kQueued, kCreatedReason, kCreatedMessage, false);
  }
  // An estimate is of a waiting job's start: it goes once the job is placed (or ends).
  if (p.job.status.phase != JobPhase::kQueued) p.job.status.start_estimate.reset();
  if (Status s = WriteStatus(p); !s.ok()) {
    // A bind that failed was undone in this pass (its bound workers deleted) whether or not the
    // status says so yet: its Warning goes out even when the status write lost a race (409), or
    // a retry that binds the gang would leave no trace of it.
    if (p.fail_after) {
      events_.Record(p.job, "Warning", PhaseReason(p.job.status), PhaseMessage(p.job.status));
    }
    return s;
  }
  if (p.status_written && p.old.placement.empty() && !p.job.status.placement.empty()) {
    EnsureDisruptionBudget(p);  // the gang was just bound (a new job's, or a restart's)
  }
  if (p.delete_all || p.delete_live) {
    if (Status s = DeletePods(p, /*only_live=*/!p.delete_all); !s.ok()) return s;
  }
  if (!IsFinished(p.job.status.phase)) return ReconcileResult{p.requeue};
  if (Status s = CleanUp(p); !s.ok()) return s;
  std::optional<int64_t> ttl = p.job.spec.run_policy.ttl_seconds_after_finished;
  std::optional<WallTime> done = ParseRfc3339(p.job.status.completion_time);
  if (!ttl || !done) return ReconcileResult{};
  WallTime due = *done + std::chrono::seconds(*ttl);
  if (p.now < due) {
    return ReconcileResult{std::chrono::duration_cast<kube::Duration>(due - p.now)};
  }
  kube::ApiResult<Json> r =
      api_.Delete(kube::resources::kDLJobs, p.job.metadata.namespace_, p.job.metadata.name);
  if (!r.ok() && !r.error().IsNotFound()) {
    return r.error().ToStatus().WithContext("deleting the finished job after its TTL");
  }
  return ReconcileResult{};
}

// Once per bound gang (a POST answered 409 when it exists from an earlier run). Best effort, as
// Events are: without it a drain evicts the job's pods one by one, which restarts the job.
// An elastic job's budget follows its size: one of another size (a resize) is replaced.
void Reconciler::EnsureDisruptionBudget(const Pass& p) {
  if (!options_.disruption_budgets) return;
  const kube::Resource& r = *options_.disruption_budgets;
  const std::string& ns = p.job.metadata.namespace_;
  const Json desired = NewDisruptionBudget(p.job, r.ApiVersion());
  kube::ApiResult<Json> made = api_.Create(r, ns, desired);
  if (made.ok() || !made.error().IsAlreadyExists() || !p.job.spec.elastic) return;
  kube::ApiResult<Json> now = api_.Get(r, ns, kube::NameOf(desired));
  if (!now.ok() || FieldOf(*now, "spec") == desired["spec"]) return;
  Json replaced = *now;
  replaced["spec"] = desired["spec"];
  (void)api_.Replace(r, ns, replaced);
}

// A pass that ends in an error before any status was written leaves a new job without a phase,
// or a queued job that was making its children with its queue's reason: it shows Queued with the
// error, so `kubectl get dljobs` says what the operator is doing.
void Reconciler::ShowFirstPhase(Pass& p, const Status& error) {
  if (p.status_written) return;
  const bool was_waiting = p.making && p.old.phase == JobPhase::kQueued &&
                           PhaseReason(p.old) != kCreatedReason;  // once, not every error
  if (p.old.phase != JobPhase::kUnset && !was_waiting) return;
  p.job.status = p.old;
  p.job.status.restarts = p.old.restarts.value_or(0);
  p.Set(JobPhase::kQueued, kCreatedReason,
        std::string(kCreatedMessage) + "; the last attempt failed, retrying: " + error.message(),
        false);
  (void)WriteStatus(p);  // best effort: the error goes back to the work queue either way
}

Status Reconciler::WriteStatus(Pass& p) {
  if (p.job.status == p.old) return Status::Ok();
  Json out = p.cached;
  out["status"] = EncodeTree(p.job)["status"];
  kube::ApiResult<Json> r =
      api_.ReplaceStatus(kube::resources::kDLJobs, p.job.metadata.namespace_, out);
  if (!r.ok())
    return r.error().ToStatus().WithContext("writing the status of " + p.job.metadata.name);
  written_.Wrote(*r);  // the next pass starts from it if the cache is still behind
  p.status_written = true;
  if (options_.timings) {
    JobTimings t = TimingsOf(p.job.metadata.creation_timestamp, p.old, p.job.status, p.now);
    if (!t.empty()) options_.timings(p.job, t);
  }
  // An Event for every transition, and for every new reason a queued job gives (the placement's
  // reason changes as the cluster does); never twice for the same one.
  std::string reason = PhaseReason(p.job.status);
  std::string message = PhaseMessage(p.job.status);
  bool queued_why = p.job.status.phase == JobPhase::kQueued && message != PhaseMessage(p.old);
  if (p.job.status.phase != p.old.phase || reason != PhaseReason(p.old) || queued_why ||
      p.job.status.restarts != p.old.restarts.value_or(0)) {
    events_.Record(p.job, p.warning ? "Warning" : "Normal", reason, message);
  }
  return Status::Ok();
}

Status Reconciler::DeletePods(Pass& p, bool only_live) {
  for (std::vector<Json>* list : {&p.pods, &p.stale}) {
    for (Json& pod : *list) {
      if (only_live && !Unfinished(pod)) continue;
      if (Status s = DeletePod(p, pod); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

bool Reconciler::OnLostNode(const Pass& p, const Json& pod) const {
  return caches_.nodes &&
         controller::OnLostNode(pod, *caches_.nodes, options_.node_lost_after, p.now);
}

// A pod being deleted is left to its kubelet, unless its node is lost: then it is deleted again
// with grace period 0, which removes it at once.
Status Reconciler::DeletePod(Pass& p, Json& pod) {
  const bool lost = OnLostNode(p, pod);
  if (IsDeleting(pod) &&
      (!lost || pod.value("/metadata/deletionGracePeriodSeconds"_json_pointer, int64_t{-1}) == 0)) {
    return Status::Ok();
  }
  kube::DeleteOptions options;
  if (lost) options.grace_period_seconds = 0;
  kube::ApiResult<Json> r =
      api_.Delete(kube::resources::kPods, p.job.metadata.namespace_, NameOf(pod), options);
  if (!r.ok() && !r.error().IsNotFound()) {
    return r.error().ToStatus().WithContext("deleting pod " + NameOf(pod));
  }
  pod["metadata"]["deletionTimestamp"] = p.now_s;  // so this pass does not delete it again
  if (lost) pod["metadata"]["deletionGracePeriodSeconds"] = 0;
  return Status::Ok();
}

Status Reconciler::CleanUp(Pass& p) {
  if (p.pods.empty() && p.stale.empty()) {
    for (Json& pod :
         caches_.pods.ByIndex(ObjectKey(p.job.metadata.namespace_, p.job.metadata.name))) {
      p.pods.push_back(std::move(pod));
    }
  }
  std::string policy = p.job.spec.run_policy.clean_pod_policy.value_or("Running");
  if (policy == "None") return Status::Ok();
  return DeletePods(p, /*only_live=*/policy != "All");
}

Result<bool> Reconciler::EnsureConfig(Pass& p) {
  const DLJob& job = p.job;
  const std::string& ns = job.metadata.namespace_;
  struct Child {
    const kube::Resource& r;
    const kube::Store& cache;
    std::string name;
  };
  for (const Child& c :
       {Child{kube::resources::kServices, caches_.services, ServiceName(job)},
        Child{kube::resources::kConfigMaps, caches_.config_maps, ConfigMapName(job)},
        Child{kube::resources::kSecrets, caches_.secrets, SshSecretName(job)}}) {
    std::optional<Json> cached = c.cache.Get(ObjectKey(ns, c.name));
    Json desired;
    if (&c.r == &kube::resources::kServices) {
      if (!cached) desired = NewWorkerService(job);  // a Service is never replaced
    } else if (&c.r == &kube::resources::kConfigMaps) {
      desired = NewConfigMap(job, options_.build);
    } else if (!cached) {  // a fresh key only when the secret has to be made
      Result<SshKeyPair> keys = keys_("dljob@" + ns + "/" + job.metadata.name);
      if (!keys.ok()) return keys.status();
      desired = NewSshSecret(job, keys->private_key, keys->authorized_key);
    }
    Result<EnsuredChild> r = EnsureChild(api_, c.r, job, desired, cached);
    if (!r.ok()) return r.status();
    if (r->state == ChildState::kExists && &c.r == &kube::resources::kConfigMaps &&
        FieldOf(r->object, "data") != FieldOf(desired, "data")) {
      // The hostfile of another size: an elastic job's resize (replaced before its pods come).
      Json replaced = r->object;
      replaced["data"] = desired["data"];
      kube::ApiResult<Json> put = api_.Replace(c.r, job.metadata.namespace_, replaced);
      if (!put.ok()) return put.error().ToStatus().WithContext("replacing " + c.name);
    }
    if (r->state == ChildState::kRefused) {
      p.Refused(kFailedCreateReason, r->message);
      return false;
    }
    if (r->state == ChildState::kForeign) {
      p.Set(JobPhase::kQueued, "NameConflict", r->message, true);
      p.RequeueIn(options_.queued_retry);
      return false;
    }
  }
  return true;
}

Result<bool> Reconciler::EnsurePods(Pass& p) {
  std::map<std::string, Json> have;
  for (Json& pod : p.pods) {
    std::string name = NameOf(pod);  // before the move: `a[f(x)] = move(x)` moves first
    have[name] = std::move(pod);
  }
  std::vector<GangWorker> gang;
  for (int64_t i = 0; i < WorkerCount(p.job); ++i) {
    if (auto it = have.find(WorkerName(p.job, i)); it != have.end()) {
      gang.push_back({std::move(it->second), true});
      continue;
    }
    Result<Json> desired = DesiredWorker(p.job, i, p.incarnation(), p.revision(), options_.build);
    if (!desired.ok()) {
      p.Set(JobPhase::kFailed, "InvalidSpec", desired.status().message(), true);
      return false;
    }
    gang.push_back({std::move(*desired), false});
  }
  std::optional<Json> launcher;
  if (auto it = have.find(LauncherName(p.job)); it != have.end()) {
    launcher = std::move(it->second);
    have.erase(it);
  }
  // Workers beyond the gang's size: the pending ones of an elastic job the queue sized smaller.
  for (auto& [name, pod] : have) {
    if (pod.is_null() || kube::LabelOf(pod, kRoleLabel) != "worker") continue;
    if (Status s = DeletePod(p, pod); !s.ok()) return s;
  }
  Result<bool> placed = PlaceGang(p, gang, launcher);
  if (!placed.ok() || !*placed) return placed;
  std::vector<Json> workers;
  for (GangWorker& w : gang) workers.push_back(std::move(w.pod));
  if (!launcher) return EnsureLauncher(p, workers);
  std::string refusal;
  Status s = BindLauncher(api_, p.job, workers, p.pods.back(), /*fresh=*/false, refusal);
  if (!s.ok()) return s;
  if (!refusal.empty()) p.Refused(kFailedBindReason, refusal);
  return refusal.empty();
}

// The job waits for the queue or for room with pending workers, so that an autoscaler sees what
// would fit: the workers `gang` lacks are created unbound, and every unbound one says `why` in its
// PodScheduled condition. p.pods becomes the workers and the launcher, if any. False, as the
// pass stops here.
Result<bool> Reconciler::WaitWithPendingWorkers(Pass& p, std::vector<GangWorker>& gang,
                                                const std::optional<Json>& launcher,
                                                const std::string& why) {
  const DLJob& job = p.job;
  std::vector<Json> workers;
  bool made = true;
  for (GangWorker& w : gang) {
    if (w.exists || !made) {
      if (w.exists) workers.push_back(std::move(w.pod));
      continue;
    }
    Result<EnsuredChild> r = EnsureChild(api_, kube::resources::kPods, job, w.pod, std::nullopt);
    if (!r.ok()) return r.status();
    made = false;
    if (r->state == ChildState::kRefused) {
      p.Refused(kFailedCreateReason, r->message);  // the clean-up stops the pods made so far
    } else if (r->state == ChildState::kForeign) {
      p.Set(JobPhase::kQueued, "NameConflict", r->message, true);
      p.RequeueIn(options_.queued_retry);
    } else if (IncarnationOf(r->object) == p.incarnation()) {
      workers.push_back(std::move(r->object));
      made = true;
    }  // else the old one is going away
  }
  if (made) MarkUnschedulable(api_, job.metadata.namespace_, workers, why, p.now_s);
  p.pods = std::move(workers);
  if (launcher) p.pods.push_back(*launcher);
  if (!made) return false;
  p.job.status.workers = Observe(job, p.pods).workers;
  p.RequeueIn(options_.queued_retry);
  return false;
}

// Places and binds the gang once the queue admits it (creating the workers it lacks already
// bound); p.pods becomes the workers that exist and the launcher, if any. True once every worker
// is placed.
Result<bool> Reconciler::PlaceGang(Pass& p, std::vector<GangWorker>& gang,
                                   const std::optional<Json>& launcher) {
  const DLJob& job = p.job;
  if (std::optional<Admission> waiting = NotAdmitted(p, gang)) {
    Result<bool> r = WaitWithPendingWorkers(p, gang, launcher, waiting->message);
    if (p.job.status.phase != JobPhase::kFailed) ShowWaiting(p, *waiting);
    return r;
  }
  Result<GangOutcome> outcome =
      BindGang(api_, clock_, caches_.gpus, job, gang, options_.bind_retry);
  if (!outcome.ok()) return outcome.status();
  if (outcome->state == GangState::kNoRoom) {
    Result<bool> r = WaitWithPendingWorkers(p, gang, launcher, outcome->reason);
    // Also after a restart (a lost node, a failed worker): a job that waits for room says so on
    // itself, as a new one does; its Restarting condition keeps why it restarted.
    if (p.job.status.phase != JobPhase::kFailed) {
      p.Set(JobPhase::kQueued, "Unschedulable", outcome->reason, true);
    }
    return r;
  }
  p.pods.clear();
  for (const GangWorker& w : gang) {
    if (w.exists) p.pods.push_back(w.pod);
  }
  if (launcher) p.pods.push_back(*launcher);
  bool restarting = p.job.status.phase == JobPhase::kRestarting;
  switch (outcome->state) {
    case GangState::kPlaced:
    case GangState::kNoRoom:
      break;
    case GangState::kBindFailed:
      if (outcome->refused) {
        p.Refused(outcome->refused_reason, *outcome->refused);
        return false;
      }
      if (!restarting) p.Set(JobPhase::kQueued, "BindFailed", outcome->reason, true);
      p.fail_after = Status::Unavailable(outcome->reason);
      break;
    case GangState::kNameConflict:
      p.Set(JobPhase::kQueued, "NameConflict", outcome->reason, true);
      break;
    case GangState::kWait:
      break;
  }
  if (outcome->state != GangState::kPlaced) {
    p.job.status.workers = Observe(job, p.pods).workers;
    p.RequeueIn(options_.queued_retry);
    return false;
  }
  // The job runs from here: the active deadline counts from the first placement of a run, not
  // from the time it waited in the queue (a suspension or preemption clears it for the next run).
  if (p.job.status.start_time.empty()) p.job.status.start_time = p.now_s;
  return true;
}

// Creates the launcher once every worker is Ready, bound beside the first worker.
Result<bool> Reconciler::EnsureLauncher(Pass& p, const std::vector<Json>& workers) {
  const DLJob& job = p.job;
  if (Observe(job, p.pods).state != JobState::kStarting) return true;
  // The launcher maps the hostfile's names to the workers' addresses (no cluster DNS needed): it
  // waits until every worker has one. A Ready pod has, so this is the cache being behind.
  std::vector<std::string> ips = WorkerPodIps(job, workers);
  if (ips.empty()) return true;

  // Created bound beside the first worker (no pods/binding call); BindLauncher binds one that an
  // earlier pass created unbound.
  Json desired = DesiredLauncher(job, p.incarnation(), p.revision(), ips, options_.build);
  if (!workers.empty() && !NodeNameOf(workers[0]).empty()) {
    desired["spec"]["nodeName"] = NodeNameOf(workers[0]);
  }
  Result<EnsuredChild> r = EnsureChild(api_, kube::resources::kPods, job, desired, std::nullopt);
  if (!r.ok()) return r.status();
  if (r->state == ChildState::kRefused) {
    p.Refused(kFailedCreateReason, r->message);
    return false;
  }
  if (r->state == ChildState::kForeign) {
    p.Set(JobPhase::kQueued, "NameConflict", r->message, true);
    p.RequeueIn(options_.queued_retry);
    return false;
  }
  Json pod = r->object;
  bool fresh = r->state == ChildState::kCreated;
  std::string refusal;
  if (Status s = BindLauncher(api_, job, workers, pod, fresh, refusal); !s.ok()) return s;
  p.pods.push_back(std::move(pod));
  if (!refusal.empty()) p.Refused(kFailedBindReason, refusal);
  return refusal.empty();
}

// Queued with the queue's reason (a Warning for those a person may have to act on); a restart
// keeps its Restarting phase while it waits.
void Reconciler::ShowWaiting(Pass& p, const Admission& a) {
  if (p.job.status.phase == JobPhase::kRestarting) return;
  bool warn = a.reason == "QuotaExceeded" || a.reason == "Unschedulable" ||
              a.reason == "Inadmissible" || a.reason == "Preempted";
  p.Set(JobPhase::kQueued, a.reason, a.message, warn);
  p.job.status.start_estimate.reset();  // as the message says it: the last one told
  if (a.estimate) {
    StartEstimateStatus& e = p.job.status.start_estimate.emplace();
    if (a.estimate->time) e.time = FormatRfc3339(WallTime(std::chrono::seconds(*a.estimate->time)));
    e.basis = std::string(scheduler::EstimateBasisName(a.estimate->basis));
    e.assumption = a.estimate->assumption;
  }
}

std::optional<Admission> Reconciler::NotAdmitted(const Pass& p,
                                                 const std::vector<GangWorker>& gang) const {
  if (!caches_.admission) return std::nullopt;
  for (const GangWorker& w : gang) {
    // BindGang completes or undoes a bound part
    if (w.exists && !NodeNameOf(w.pod).empty()) return std::nullopt;
  }
  Admission a = caches_.admission->Get(ObjectKey(p.job.metadata.namespace_, p.job.metadata.name));
  if (a.verdict == Verdict::kAdmitted) return std::nullopt;
  if (a.verdict == Verdict::kUnknown) {
    a.reason = "WaitingInQueue";
    a.message = "waiting for the queue's next pass";
  }
  return a;
}

}  // namespace dljob::controller
