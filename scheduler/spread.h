// The "spread" placement policy: kube-scheduler's default scoring applied to a gang. Each worker
// in turn goes to the feasible node with the most left free after it (LeastAllocated: the mean
// free fraction of the GPUs, CPU and memory it asks for), ties by name. Spreads load and leaves
// no node whole; the baseline for what kube-scheduler plus a gang plugin would do. Ignores
// topology and dataset locality.
#pragma once

#include "scheduler/placement_policy.h"

namespace dljob::scheduler {

PlacementPolicyPtr NewSpreadPolicy();

}  // namespace dljob::scheduler
