// Reconciler: brings one DLJob's children and status in line with its spec, once.
//
// Reconcile(key) is the linear, idempotent function of mpi-operator's controller: read the job
// from the informer cache → copy → default → validate (invalid: Failed/InvalidSpec, nothing
// created) → apply the run policy (jobs/run_policy.h decides suspend, activeDeadlineSeconds,
// progressDeadlineSeconds and restarts up to backoffLimit; here they become status and pod
// deletions; then cleanPodPolicy, ttlSecondsAfterFinished) → ensure the children
// (headless Service, hostfile ConfigMap, per-job SSH Secret, worker Pods placed all-or-nothing on
// nodes with free GPUs and created there (gang_binding.h), and the launcher Pod beside the first
// worker once every worker is Ready) →
// status derived from the observed pods, written with ReplaceStatus only when it changed, plus an
// Event for every phase transition (and for every new reason a Queued job gives). Running it
// again with nothing changed writes nothing.
//
// The queue (queue_scheduler.h) decides which jobs may bind their gangs (AdmissionBook): a job it
// has not admitted stays Queued with the queue's reason (QuotaExceeded, Unschedulable,
// WaitingInQueue, Inadmissible) and binds nothing. A job it preempts is suspended like
// runPolicy.suspend — Queued/Preempted, a Preempted condition, status.preemptions counted, the
// GPU-seconds of the run added to status.attainedGpuSeconds, its pods deleted (they get SIGTERM
// and checkpoint) — and is not restarted: when admitted again it resumes (reason Resumed) from
// its checkpoint, with restarts unchanged.
//
// Spec changes: every pass records metadata.generation in status.observedGeneration. Pods carry
// the revision of the spec they were made from (jobs/spec_revision.h); when a running or waiting
// job's spec changes in a field that shapes its pods, the whole job is restarted with the new
// spec — Restarting/SpecChanged, an Event, status.specRestarts counted (not restarts: backoffLimit
// is not spent) — from its checkpoint. Changes to runPolicy, queue and priority take effect
// without a restart. Which changes the API server lets through at all is the admission webhook's
// rule. activeDeadlineSeconds counts from status.startTime, set when a run's gang is first placed
// (not while it waits in the queue), kept across restarts, cleared by a suspension or preemption.
//
// Workers lost and gangs that do not bind:
//   - A worker that fails, or goes away (deleted, evicted, its node removed: FindLostWorker in
//     observation.h) once its gang was bound, ends the attempt: the run policy restarts the whole
//     job (counted in status.restarts, with a condition and an Event naming the pod and why) or
//     fails it. A worker is never silently recreated while mpirun runs on the others.
//   - A node under a running job that stays not Ready for node_lost_after (its kubelet gone:
//     node_loss.h) is lost: the whole job restarts on the nodes that remain, from its
//     checkpoint — Restarting/NodeLost, an Event, status.disruptionRestarts counted (not
//     restarts) — and its pods on that node are deleted at once (grace period 0: no kubelet will
//     confirm a graceful delete there). When the rest cannot hold it, it waits Queued with the
//     placement's reason. Never a partial gang: no pod is recreated alone.
//   - A cordoned node under a running job (kubectl cordon or drain) is emptied of it whole: once
//     the other nodes can hold the gang, the job restarts there from its checkpoint —
//     Restarting/NodeCordoned, counted in status.disruptionRestarts — its pods deleted gracefully
//     (the ranks checkpoint on SIGTERM). Until then it runs on where it is; its
//     PodDisruptionBudget keeps a drain from evicting its pods one by one.
//   - A job that does not fit stays Queued with the placement's reason (reason Unschedulable),
//     with pending workers (made unbound, so an autoscaler sees them) that carry
//     PodScheduled=False/Unschedulable with the same message; they are bound once it fits.
//   - A create or bind that fails part-way undoes the gang (its bound workers deleted, the
//     ledger's assumptions forgotten); the job shows Queued/BindFailed (unless it is restarting)
//     and the pass returns the error, so the work queue tries again with backoff.
//
// It reads the job and its children from caches (Stores kept by informers), places workers with
// the GpuLedger (also kept by informers) and writes through the Api; the reads that go to the
// server are a GET after AlreadyExists and those BindGang makes to settle a 409 or an
// AlreadyExists or to confirm a half-bound gang before completing it. Status writes carry the
// cached resourceVersion, so a stale cache ends in 409 Conflict, returned as an error: the caller
// requeues with backoff. A job's status write always comes before the pod deletions it announces (a
// restart), so a failed write never leaves pods deleted without a record; undoing a half-bound gang
// deletes first (it counts nothing, and the GPUs matter more).
//
// Thread-safe for different keys at once; the work queue never hands one key to two workers.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/field_error.h"
#include "jobs/run_policy.h"
#include "kube/api.h"
#include "kube/runtime/duration.h"
#include "kube/runtime/mutation_cache.h"
#include "kube/runtime/store.h"
#include "operator/controller/admission.h"
#include "operator/controller/builders.h"
#include "operator/controller/children.h"  // Json
#include "operator/controller/events.h"
#include "operator/controller/gang_binding.h"
#include "operator/controller/gpu_ledger.h"
#include "operator/controller/job_timings.h"
#include "operator/controller/log_drain.h"
#include "operator/controller/node_loss.h"
#include "operator/controller/ssh_keys.h"

namespace dljob::controller {

// The informer caches the reconciler reads. Pods must be indexed by OwnerJobKey (children.h);
// services, config maps and secrets are looked up by "namespace/name". The ledger, fed with nodes
// and bound pods, is where workers are placed (and their GPUs reserved).
// `admission`, when set, is the queue's word on each job (admission.h): a job binds its gang only
// once admitted, and is suspended when the queue preempts it. Unset, every job binds as soon as
// its gang fits (no queue; tests of other behaviour use this).
struct Caches {
  const kube::Store& jobs;
  const kube::Store& pods;
  const kube::Store& services;
  const kube::Store& config_maps;
  const kube::Store& secrets;
  GpuLedger& gpus;
  AdmissionBook* admission = nullptr;
  const kube::Store* nodes = nullptr;  // the Node informer's; null: no node is ever judged lost
};

struct ReconcilerOptions {
  BuildOptions build{};
  // How soon a job that is waiting for GPUs (or for a name held by a stranger) looks again.
  kube::Duration queued_retry{std::chrono::seconds(10)};
  // The retries of one bind (after 5xx, 429 and transport failures).
  kube::RetryOptions bind_retry = DefaultBindRetry();
  // Whether the launcher's log has been read to its end (log_drain.h): a job whose launcher
  // exited 0 is marked Succeeded once it has, so its final metrics come first. Unset: at once.
  LauncherLogEnded launcher_log_ended;
  // Told how long a job waited (job_timings.h) after each status write that lands; unset: no one.
  JobTimingsSink timings;
  // How long a node under a running job may be not Ready before it counts as lost (node_loss.h).
  kube::Duration node_lost_after{std::chrono::seconds(30)};
  // Events created off the reconcile pass by the recorder's own thread (events.h), as the
  // operator runs; false: within the pass, in order (tests assert the calls).
  bool async_events = false;
  // Where the jobs' PodDisruptionBudgets go (kube::resources::kPodDisruptionBudgets or its
  // v1beta1), made once a gang is bound; unset: none is made.
  std::optional<kube::Resource> disruption_budgets;
  // The node label naming a rack, for saying where a gang was placed (PlacementOptions).
  std::string rack_label = scheduler::kDefaultRackLabel;
};

struct ReconcileResult {
  // Reconcile again after this long even if nothing changes (deadlines, TTL, waiting for GPUs);
  // nullopt: only when something changes.
  std::optional<kube::Duration> requeue_after;
};

struct Observation;  // observation.h
struct LostWorker;   // observation.h

class Reconciler {
 public:
  // `clock` gives the time and paces a bind's retries.
  Reconciler(kube::Api& api, Clock& clock, Caches caches, ReconcilerOptions options = {},
             SshKeyGenerator keys = GenerateSshKeyPair);

  // `key` is "namespace/name". `last_progress` is when the job last made progress (its newest
  // metric line), for progressDeadlineSeconds; nullopt counts from when it started running.
  // Errors are API failures (including 409 on a stale cache): requeue with backoff.
  Result<ReconcileResult> Reconcile(const std::string& key,
                                    std::optional<WallTime> last_progress = std::nullopt);

  // Whether `job`, as the jobs' informer delivered it, is this reconciler's own status write
  // coming back: nothing a pass would act on. (A write the informer has caught up with is
  // forgotten either way.)
  bool OwnWrite(const Json& job) { return written_.Observed(job); }

 private:
  struct Pass;  // one reconcile's working state (reconciler.cc)

  Result<ReconcileResult> Run(Pass& p, const std::string& key,
                              std::optional<WallTime> last_progress);
  FieldErrors Load(Pass& p);  // the spec's errors; none for a finished job
  Result<ReconcileResult> Converge(Pass& p);
  void ShowProgress(Pass& p);
  Result<ReconcileResult> Finish(Pass& p);
  void ShowFirstPhase(Pass& p, const Status& error);
  Status WriteStatus(Pass& p);
  Status DeletePods(Pass& p, bool only_live);
  Status CleanUp(Pass& p);
  Result<bool> EnsureConfig(Pass& p);  // false: a stranger holds a name (reported)
  Result<bool> EnsurePods(Pass& p);    // false: waiting (old pods, stranger, no room)
  // EnsurePods' steps; false, as there, stops the pass.
  Result<bool> PlaceGang(Pass& p, std::vector<GangWorker>& gang,
                         const std::optional<Json>& launcher);
  Result<bool> WaitWithPendingWorkers(Pass& p, std::vector<GangWorker>& gang,
                                      const std::optional<Json>& launcher, const std::string& why);
  Result<bool> EnsureLauncher(Pass& p, const std::vector<Json>& workers);
  // The worker lost after its gang was bound, if any; one the cache lacks is confirmed gone
  // with the server first.
  Result<std::optional<LostWorker>> FindLost(const Pass& p);
  std::string PlacedOn(const std::vector<PlacementEntry>& placement) const;
  bool MoveOffCordoned(Pass& p, const std::string& node);
  void EnsureDisruptionBudget(const Pass& p);
  static RunObservation Observed(const Pass& p, const Observation& seen,
                                 const std::optional<LostWorker>& lost,
                                 std::optional<WallTime> last_progress);
  static void Apply(Pass& p, const RunDecision& d, const Observation& seen);
  // Suspends the job for the queue (`why`: the preemption's reason): status first, then its pods.
  static void Preempt(Pass& p, const std::string& why);
  // A spec that no longer matches the pods' (SpecChanged) is applied by a whole-job restart.
  static bool SpecChanged(Pass& p, const Observation& seen);
  static void RestartForSpec(Pass& p);
  // An elastic job runs on the workers the queue gives it: `job` gets spec.gpus of that size.
  void SizeElasticRun(Pass& p, const std::string& key) const;
  // Whether the elastic job's bound gang was made for another size than the queue gives it now.
  static bool Resized(const Pass& p);
  // A resize is applied by a whole-job restart at the new size, from the checkpoint.
  static void RestartForResize(Pass& p);
  // A node under the job lost (node_loss.h): the whole job restarts on the nodes that remain.
  static void RestartForNodeLoss(Pass& p, const std::string& why);
  // A whole-job restart that fails no attempt (a lost or cordoned node, a worker lost before the
  // launcher started): counted in status.disruptionRestarts, spending nothing of backoffLimit.
  static void RestartAsDisruption(Pass& p, const char* reason, const std::string& message,
                                  bool warn);
  // Deletes one of the job's pods: gracefully, or at once on a lost node.
  Status DeletePod(Pass& p, Json& pod);
  bool OnLostNode(const Pass& p, const Json& pod) const;
  static void StopAllPods(Pass& p);  // status: no pod ready or placed; then every pod deleted
  // What the queue says while it does not let the gang bind yet; nullopt once it does (or
  // there is no queue, or part of the gang is bound already: BindGang completes or undoes it).
  std::optional<Admission> NotAdmitted(const Pass& p, const std::vector<GangWorker>& gang) const;
  // Whether the job waits in the queue with nothing created yet (it is then marked Queued with
  // the queue's reason): judged by the queue and not admitted, no pods, not waiting for room.
  bool WaitsWithoutPods(Pass& p);
  // Marks the job Queued with the queue's reason and message (unless it is restarting).
  static void ShowWaiting(Pass& p, const Admission& a);

  kube::Api& api_;
  Clock& clock_;
  const Caches caches_;
  const ReconcilerOptions options_;
  const SshKeyGenerator keys_;
  EventRecorder events_;
  // The status writes the jobs cache has not shown yet: a pass woken by the effects of the last
  // one's write starts from what that write returned, not a stale resourceVersion.
  kube::MutationCache written_;
};

}  // namespace dljob::controller
