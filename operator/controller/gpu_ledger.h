// GpuLedger: the operator's running account of GPUs per node, so gang placement never has to ask
// the API server (kube-scheduler's assume cache, reduced to what PlaceGang needs).
//
// It holds, per node, what scheduler::NodeState needs (allocatable nvidia.com/gpu, labels, taints,
// whether it takes new pods) and the GPUs in use there, from two sources:
//   - observed: every live pod bound to the node — any pod, not only dljob's, since other pods use
//     GPUs too — as the informers report them (UpsertPod/RemovePod). Succeeded and Failed pods
//     free their GPUs. Per pod it keeps only "namespace/name", uid, node and GPU count.
//   - assumed: pods PlaceAndAssume has just placed, counted from the moment of placement until the
//     informer shows them bound (the observation then replaces the assumption, matched by uid),
//     Forget() drops them (a bind failed), or they expire `assume_ttl` after placement without
//     ever being observed (a bind that was lost, a pod deleted before its binding was seen).
// PlaceAndAssume places and records under one lock, so two reconcilers placing at once never
// count the same free GPUs twice.
//
// The ledger also remembers which jobs last failed to fit (Waiting()), so whoever feeds it can
// wake exactly those jobs when GPUs free up (Upsert*/Remove* return true then).
//
// Pure (no API calls; time from the injected Clock) and thread-safe: every method may be called
// from any thread.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/dljob_types.h"
#include "operator/controller/duration.h"
#include "operator/scheduler/first_fit.h"

namespace dljob::controller {

// A pod to place: its "namespace/name" and metadata.uid ("" when unknown; then any pod of that
// name observed bound counts as this one).
struct PodClaim {
  std::string key;
  std::string uid;
};

// Where one claimed pod goes. `fresh`: placed (and assumed) by this call, so the caller must bind
// it; otherwise the ledger already knew it bound or assumed there.
struct Seat {
  std::string node;
  bool fresh = false;
};

class GpuLedger {
 public:
  explicit GpuLedger(const Clock& clock, Duration assume_ttl = std::chrono::seconds(30));
  GpuLedger(const GpuLedger&) = delete;
  GpuLedger& operator=(const GpuLedger&) = delete;

  // From the nodes informer. True when the node may have room it did not have before (new, more
  // GPUs, became schedulable, or labels/taints changed).
  bool UpsertNode(const nlohmann::json& node);
  bool RemoveNode(const nlohmann::json& node);
  // From an informer of pods bound to nodes (unbound pods are ignored). True when GPUs freed up.
  bool UpsertPod(const nlohmann::json& pod);
  bool RemovePod(const nlohmann::json& pod);

  // A seat for every pod of `pods` (same order), or none: pods already observed bound or assumed
  // keep their node; the rest are placed together by scheduler::PlaceGang on observed + assumed
  // use and assumed at job.spec.gpusPerWorker GPUs each. `job_key` ("namespace/name") is
  // remembered in Waiting() when the gang does not fit, and dropped from it when it does.
  // Errors: kFailedPrecondition with PlaceGang's reason the gang does not fit.
  Result<std::vector<Seat>> PlaceAndAssume(const std::string& job_key, const DLJob& job,
                                           const std::vector<PodClaim>& pods);
  // Drops the assumptions of these pods (their binding failed); observed pods are unaffected.
  void Forget(const std::vector<PodClaim>& pods);

  // Jobs whose last placement did not fit.
  std::vector<std::string> Waiting() const;
  // The job no longer waits (deleted).
  void StopWaiting(const std::string& job_key);
  // The nodes as PlaceGang would see them now (used = observed + assumed), by name.
  std::vector<scheduler::NodeState> Nodes() const;
  size_t Assumed() const;  // not yet expired
  size_t Observed() const;

 private:
  struct PodUse {
    std::string uid;
    std::string node;
    int64_t gpus = 0;
  };
  struct Assumption {
    PodUse use;
    WallTime expires;
  };

  void ExpireLocked(WallTime now);
  void UseLocked(const std::string& node, int64_t delta);
  void DropAssumptionLocked(std::map<std::string, Assumption>::iterator it);

  const Clock& clock_;
  const Duration assume_ttl_;
  mutable std::mutex mu_;
  std::map<std::string, scheduler::NodeState> nodes_;  // GUARDED_BY(mu_); used_gpus unset
  std::map<std::string, int64_t> used_;        // GUARDED_BY(mu_): node → observed + assumed
  std::map<std::string, PodUse> observed_;     // GUARDED_BY(mu_): by "namespace/name"
  std::map<std::string, Assumption> assumed_;  // GUARDED_BY(mu_): by "namespace/name"
  std::set<std::string> waiting_;              // GUARDED_BY(mu_): job keys
};

// The placer's view of one Node object (used_gpus left 0). Pure; exposed for tests.
scheduler::NodeState NodeStateOf(const nlohmann::json& node);
// The nvidia.com/gpu a pod uses: per container its limit, else its request. Pure.
int64_t PodGpus(const nlohmann::json& pod);
// Only the fields of a pod the ledger reads (metadata name/namespace/uid/resourceVersion,
// spec.nodeName, the containers' resources, status.phase): an informer transform, so a cache of
// every bound pod in the cluster stays small. Pure.
nlohmann::json LedgerPodView(const nlohmann::json& pod);

}  // namespace dljob::controller
