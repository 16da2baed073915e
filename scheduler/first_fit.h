// The "first-fit" placement policy: dljob's first gang placer, kept as the baseline the others
// are measured against. All workers on the tightest single node that holds the whole gang (the
// least free GPUs, then CPU, then memory; then by name), keeping big nodes whole; else across
// the nodes with the most room (slots) first, which uses the fewest nodes. Ignores topology and
// dataset locality. Feasibility (feasibility.h) decides which nodes count and how many workers
// each takes. Immutable; thread-safe.
#pragma once

#include "scheduler/placement_policy.h"

namespace dljob::scheduler {

PlacementPolicyPtr NewFirstFitPolicy();

}  // namespace dljob::scheduler
