// GpuLedger: the operator's running account of what is used on every node, so gang placement
// never has to ask the API server (kube-scheduler's assume cache, reduced to what placement needs).
//
// It holds every node as scheduler::Node (cluster.h: allocatable GPUs, CPU, memory and pods;
// labels; taints; whether it takes new pods; cluster_view.h reads them from Node objects) and
// what is used there, from two sources:
//   - observed: every live pod bound to the node — any pod, not only dljob's, since other pods use
//     GPUs, CPU and memory too — as the informers report them (UpsertPod/RemovePod), counted as
//     kube-scheduler counts them (cluster_view.h's PodRequests). Succeeded and Failed pods free
//     what they used. Per pod it keeps only "namespace/name", uid, node and requests.
//   - assumed: pods PlaceAndAssume has just placed, counted at the gang's per-worker request from
//     the moment of placement until the informer shows them bound (the observation then replaces
//     the assumption, matched by uid), Forget() drops them (a bind failed), or they expire
//     `assume_ttl` after placement without ever being observed (a bind that was lost, a pod
//     deleted before its binding was seen).
// PlaceAndAssume places (with the injected scheduler::PlacementPolicy) and records under one
// lock, so two reconcilers placing at once never count the same free resources twice.
//
// The ledger also remembers which jobs last failed to fit (Waiting()), so whoever feeds it can
// wake exactly those jobs when room appears (Upsert*/Remove* return true then).
//
// Pure (no API calls; time from the injected Clock) and thread-safe: every method may be called
// from any thread. The policy is only read (policies are immutable) and must outlive the ledger.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "jobs/dljob_types.h"
#include "kube/runtime/duration.h"
#include "operator/controller/cluster_view.h"
#include "scheduler/cluster.h"
#include "scheduler/placement_policy.h"

namespace dljob::controller {

using Json = nlohmann::json;  // as in children.h

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

// What the ledger counts, at one instant: the nodes with their use, and every pod counted there
// (observed bound, or assumed and not expired) by "namespace/name".
struct LedgerView {
  struct Pod {
    std::string node;
    scheduler::Resources requests;
  };
  std::vector<scheduler::Node> nodes;  // by name
  std::map<std::string, Pod> pods;
};

class GpuLedger {
 public:
  // Places with `policy` (not owned; it must outlive the ledger).
  GpuLedger(const Clock& clock, const scheduler::PlacementPolicy& policy,
            kube::Duration assume_ttl = std::chrono::seconds(30));
  // Places with the "dljob" policy, as dljob-operator does by default.
  explicit GpuLedger(const Clock& clock, kube::Duration assume_ttl = std::chrono::seconds(30));
  GpuLedger(const GpuLedger&) = delete;
  GpuLedger& operator=(const GpuLedger&) = delete;

  // From the nodes informer. True when the node may have room it did not have before (new, more
  // of any allocatable resource, became schedulable, or labels/taints changed).
  bool UpsertNode(const nlohmann::json& node) EXCLUDES(mu_);
  bool RemoveNode(const nlohmann::json& node) EXCLUDES(mu_);
  // From an informer of pods bound to nodes (unbound pods are ignored). True when a pod stopped
  // using a node that has GPUs (the only nodes a DLJob worker can use), so waiting jobs may fit.
  bool UpsertPod(const nlohmann::json& pod) EXCLUDES(mu_);
  bool RemovePod(const nlohmann::json& pod) EXCLUDES(mu_);

  // A seat for every pod of `pods` (same order), or none: pods already observed bound or assumed
  // keep their node; the rest are placed together by the policy (as a gang of that many workers
  // of the job's per-worker request, scheduler::GangOf) on observed + assumed use, and assumed at
  // that request each. `job_key` ("namespace/name") is remembered in Waiting() when the gang does
  // not fit, and dropped from it when it does.
  // Errors: kFailedPrecondition with the policy's reason the gang does not fit; kInvalidArgument
  // for a job GangOf cannot read (not validated).
  Result<std::vector<Seat>> PlaceAndAssume(const std::string& job_key, const DLJob& job,
                                           const std::vector<PodClaim>& pods) EXCLUDES(mu_);
  // Whether the job's whole gang could be placed now if the pods `pod_keys` ("namespace/name",
  // its current ones) were gone: placed by the policy on the nodes as they are, less what those
  // pods use. Assumes nothing. For moving a running job off a node (a cordoned one is not
  // schedulable, so it is left out). Errors as PlaceAndAssume.
  Status FitsWithout(const DLJob& job, const std::vector<std::string>& pod_keys) const
      EXCLUDES(mu_);
  // Drops the assumptions of these pods (their binding failed); observed pods are unaffected.
  void Forget(const std::vector<PodClaim>& pods) EXCLUDES(mu_);

  // Jobs whose last placement did not fit.
  std::vector<std::string> Waiting() const EXCLUDES(mu_);
  // The job no longer waits (deleted).
  void StopWaiting(const std::string& job_key) EXCLUDES(mu_);
  // The nodes as the policy would see them now (used = observed + unexpired assumed), by name.
  std::vector<scheduler::Node> Nodes() const EXCLUDES(mu_);
  // The nodes and the pods counted on them, read under one lock.
  LedgerView View() const EXCLUDES(mu_);
  size_t Assumed() const EXCLUDES(mu_);  // not yet expired
  size_t Observed() const EXCLUDES(mu_);

 private:
  struct PodUse {
    std::string uid;
    std::string node;
    scheduler::Resources requests;
  };
  struct Assumption {
    PodUse use;
    WallTime expires;
  };

  void ExpireLocked(WallTime now) REQUIRES(mu_);
  // Adds (sign +1) or takes away (-1) a pod's use on its node.
  void UseLocked(const PodUse& use, int sign) REQUIRES(mu_);
  void DropAssumptionLocked(std::map<std::string, Assumption>::iterator it) REQUIRES(mu_);
  // Whether the node exists and has GPUs.
  bool GpuNodeLocked(const std::string& node) const REQUIRES(mu_);
  // The nodes, each with `used` of its name (what placement sees).
  std::vector<scheduler::Node> NodesLocked(
      const std::map<std::string, scheduler::Resources>& used) const REQUIRES(mu_);
  // The same with used_, kept from one placement to the next (a placement then copies no node):
  // rebuilt after a node is added or removed, changed in place otherwise.
  const std::vector<scheduler::Node>& PlacementViewLocked() REQUIRES(mu_);

  const Clock& clock_;
  const kube::Duration assume_ttl_;
  const scheduler::PlacementPolicyPtr owned_policy_;  // set by the constructor without a policy
  const scheduler::PlacementPolicy& policy_;
  mutable Mutex mu_;
  std::map<std::string, scheduler::Node> nodes_ GUARDED_BY(mu_);      // `used` unset
  std::map<std::string, scheduler::Resources> used_ GUARDED_BY(mu_);  // observed + assumed
  std::map<std::string, PodUse> observed_ GUARDED_BY(mu_);            // by "namespace/name"
  std::map<std::string, Assumption> assumed_ GUARDED_BY(mu_);         // by "namespace/name"
  // Assumptions in the order they expire (every one lives assume_ttl_), so expiring them looks at
  // the expired ones only; an entry whose assumption is gone or newer is skipped.
  std::deque<std::pair<WallTime, std::string>> expiries_ GUARDED_BY(mu_);
  // PlacementViewLocked's nodes by name (valid unless view_stale_), and each one's index there.
  std::vector<scheduler::Node> view_ GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> view_at_ GUARDED_BY(mu_);
  bool view_stale_ GUARDED_BY(mu_) = true;
  std::set<std::string> waiting_ GUARDED_BY(mu_);  // job keys
};

}  // namespace dljob::controller
