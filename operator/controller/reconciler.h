// Reconciler: brings one DLJob's children and status in line with its spec, once.
//
// Reconcile(key) is the linear, idempotent function of mpi-operator's controller: read the job
// from the informer cache → copy → default → validate (invalid: Failed/InvalidSpec, nothing
// created) → apply the run policy (jobs/run_policy.h decides suspend, activeDeadlineSeconds,
// progressDeadlineSeconds and restarts up to backoffLimit; here they become status and pod
// deletions; then cleanPodPolicy, ttlSecondsAfterFinished) → ensure the children
// (headless Service, hostfile ConfigMap, per-job SSH Secret, worker Pods bound all-or-nothing to
// nodes with free GPUs, and the launcher Pod once every worker is Ready) → status derived from
// the observed pods, written with ReplaceStatus only when it changed, plus an Event for every
// phase transition. Running it again with nothing changed writes nothing.
//
// It reads the job and its children from caches (Stores kept by informers), places workers with
// the GpuLedger (also kept by informers) and writes through the Api; the only read that goes to
// the server is a GET after AlreadyExists. Status writes carry the
// cached resourceVersion, so a stale cache ends in 409 Conflict, returned as an error: the
// caller requeues with backoff. A job's status write always comes before the pod deletions it
// announces (a restart), so a failed write never leaves pods deleted without a record.
//
// Thread-safe for different keys at once; the work queue never hands one key to two workers.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/run_policy.h"
#include "kube/api.h"
#include "operator/controller/builders.h"
#include "operator/controller/duration.h"
#include "operator/controller/events.h"
#include "operator/controller/gpu_ledger.h"
#include "operator/controller/ssh_keys.h"
#include "operator/controller/store.h"

namespace dljob::controller {

// The informer caches the reconciler reads. Pods must be indexed by OwnerJobKey (children.h);
// services, config maps and secrets are looked up by "namespace/name". The ledger, fed with nodes
// and bound pods, is where workers are placed (and their GPUs reserved).
struct Caches {
  const Store& jobs;
  const Store& pods;
  const Store& services;
  const Store& config_maps;
  const Store& secrets;
  GpuLedger& gpus;
};

struct ReconcilerOptions {
  BuildOptions build;
  // How soon a job that is waiting for GPUs (or for a name held by a stranger) looks again.
  Duration queued_retry{std::chrono::seconds(10)};
};

struct ReconcileResult {
  // Reconcile again after this long even if nothing changes (deadlines, TTL, waiting for GPUs);
  // nullopt: only when something changes.
  std::optional<Duration> requeue_after;
};

struct Observation;  // observation.h

class Reconciler {
 public:
  Reconciler(kube::Api& api, const Clock& clock, Caches caches, ReconcilerOptions options = {},
             SshKeyGenerator keys = GenerateSshKeyPair);

  // `key` is "namespace/name". `last_progress` is when the job last made progress (its newest
  // metric line), for progressDeadlineSeconds; nullopt counts from when it started running.
  // Errors are API failures (including 409 on a stale cache): requeue with backoff.
  Result<ReconcileResult> Reconcile(const std::string& key,
                                    std::optional<WallTime> last_progress = std::nullopt);

 private:
  struct Pass;  // one reconcile's working state (reconciler.cc)

  Result<ReconcileResult> Finish(Pass& p);
  Status WriteStatus(Pass& p);
  Status DeletePods(Pass& p, bool only_live);
  Status CleanUp(Pass& p);
  Result<bool> EnsureConfig(Pass& p);  // false: a stranger holds a name (reported)
  Result<bool> EnsurePods(Pass& p);    // false: waiting (old pods, stranger, no room)
  static RunObservation Observed(const Pass& p, const Observation& seen,
                                 std::optional<WallTime> last_progress);
  static void Apply(Pass& p, const RunDecision& d, const Observation& seen);

  kube::Api& api_;
  const Clock& clock_;
  const Caches caches_;
  const ReconcilerOptions options_;
  const SshKeyGenerator keys_;
  EventRecorder events_;
};

}  // namespace dljob::controller
