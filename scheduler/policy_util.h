// What the placement policies share beyond feasibility.h: turning per-node worker counts into a
// Placement, and placing one worker at a time by a node score (the spread and best-fit policies).
// Internal to scheduler. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/cluster.h"
#include "scheduler/feasibility.h"

namespace dljob::scheduler {

// `workers` of a gang on `node`.
struct Take {
  const Node* node = nullptr;
  int64_t workers = 0;
};
// Worker i on the node of the take that covers it, takes in order: a node's workers are
// consecutive ranks.
Placement Expand(const std::vector<Take>& takes);

// The mean, over the resources both the node accounts for and a worker asks for, of the fraction
// of the node's allocatable that `placed` workers of `per_worker` would leave free (1: all free,
// 0: none); 0 when no resource counts. kube-scheduler's LeastAllocated score, in [0, 1].
double FreeFractionAfter(const Node& node, const Resources& per_worker, int64_t placed);

// Each worker in turn on the candidate with the highest FreeFractionAfter counting that worker
// (most_free: kube-scheduler's spread) or the lowest (best fit), ties to the earlier name. A
// node's workers are consecutive in the result, nodes in the order they were first chosen.
// REQUIRES: Room(candidates) >= gang.workers.
Placement PlaceOneByOne(const Gang& gang, const std::vector<Candidate>& candidates, bool most_free);

}  // namespace dljob::scheduler
