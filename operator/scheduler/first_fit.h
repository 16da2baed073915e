// First-fit gang placement: every worker of a job gets a node, or none does.
//
// Given the GPU nodes as the scheduler sees them (allocatable and already-used GPUs, labels,
// taints) and a job's workers (count × GPUs each, nodeSelector, tolerations), PlaceGang assigns
// each worker a node: all on the tightest single node that holds the whole gang if there is one
// (best fit, keeping big nodes whole), else across the roomiest nodes first (the fewest nodes).
// When the gang does not fit, it places nothing and says why in a sentence a person can act on.
// The full scheduler (topology, queues, dataset locality) will replace this behind the same
// result type. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"

namespace dljob::scheduler {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

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

// Errors are kFailedPrecondition with the reason the gang does not fit, e.g.
// "needs 2 workers × 8 GPUs; 1 of 3 nodes match nodeSelector and tolerations, with room for 1".
Result<GangPlacement> PlaceGang(const DLJob& job, const std::vector<NodeState>& nodes);

// Whether the job's tolerations allow a pod onto a node with these taints (NoSchedule and
// NoExecute taints must be tolerated; PreferNoSchedule never blocks).
bool ToleratesTaints(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);

}  // namespace dljob::scheduler
