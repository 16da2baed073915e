// The "first-fit" placement policy: dljob's first gang placer, kept as the baseline the others
// are measured against. All workers on the tightest single node that holds the whole gang (the
// least free GPUs, then CPU, then memory; then by name), keeping big nodes whole; else across
// the nodes with the most room (slots) first, which uses the fewest nodes. Ignores topology and
// dataset locality. Feasibility (feasibility.h) decides which nodes count and how many workers
// each takes.
//
// PlaceGang and NodeState are the pre-policy interface, kept until the GPU ledger moves onto
// cluster.h's Node; new code uses MakePlacementPolicy("first-fit").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "operator/scheduler/cluster.h"
#include "operator/scheduler/feasibility.h"
#include "operator/scheduler/placement_policy.h"

namespace dljob::scheduler {

PlacementPolicyPtr NewFirstFitPolicy();

struct NodeState {
  std::string name;
  int64_t allocatable_gpus = 0;  // status.allocatable["nvidia.com/gpu"]
  int64_t used_gpus = 0;         // by pods already bound there
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  bool schedulable = true;  // false when cordoned or not Ready
};

struct GangPlacement {
  std::vector<std::string> worker_nodes;  // worker i runs on worker_nodes[i]
};

// The first-fit policy on GPUs alone. Errors: kFailedPrecondition with the reason the gang does
// not fit (feasibility.h's Unplaceable).
Result<GangPlacement> PlaceGang(const DLJob& job, const std::vector<NodeState>& nodes);

}  // namespace dljob::scheduler
