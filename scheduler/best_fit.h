// The "best-fit" placement policy: each worker in turn goes to the feasible node with the least
// left free after it (MostAllocated: the lowest mean free fraction of the GPUs, CPU and memory it
// asks for), ties by name. Fills partly used nodes first so whole nodes stay free, but does not
// minimise the number of nodes a gang spans. Ignores topology and dataset locality.
#pragma once

#include "scheduler/placement_policy.h"

namespace dljob::scheduler {

PlacementPolicyPtr NewBestFitPolicy();

}  // namespace dljob::scheduler
