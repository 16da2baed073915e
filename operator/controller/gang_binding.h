// Gang binding: the operator's own scheduler for its pods (schedulerName dljob-scheduler).
//
// BindGang reads the cluster as it is now (nodes and all pods, listed fresh from the API, not from
// a cache that may lag its own bindings), works out each node's free nvidia.com/gpu, asks
// scheduler::PlaceGang for a place for every still-unbound worker of the job, and binds them
// through pods/binding — all of them, or none when they do not fit. Thread-safe as the Api is;
// two jobs bound at once may race for the same GPUs, which the kubelet settles, as with any
// scheduler without reservations.
#pragma once

#include <string>
#include <vector>

#include "jobs/dljob_types.h"
#include "jobs/status.h"
#include "operator/kube/api.h"
#include "operator/scheduler/first_fit.h"

namespace dljob::controller {

struct GangOutcome {
  bool placed = false;  // every worker is bound now
  std::string reason;   // when not placed: why, for the job's Queued condition
};

// `workers` are the job's current worker pods; those bound here get spec.nodeName set in place.
Result<GangOutcome> BindGang(kube::Api& api, const DLJob& job, std::vector<nlohmann::json>& workers);

// Node views for the placer: allocatable GPUs, GPUs used by live pods bound there, labels,
// taints, and whether the node takes new pods (not cordoned, Ready). Pure; exposed for tests.
std::vector<scheduler::NodeState> NodeStates(const nlohmann::json& nodes,
                                             const nlohmann::json& pods);

}  // namespace dljob::controller
