// The "dljob" placement policy: dljob's own, for gangs that train with collectives. It compares
// placements by, in order:
//   1. the fewest nodes (fewer inter-node hops in every allreduce);
//   2. topology: for Pack or unset, all nodes in one NVLink clique (nvidia.com/gpu.clique), else
//      one rack (PlacementOptions::rack_label), else one zone (topology.kubernetes.io/zone); for
//      Spread, as many zones, then racks, then cliques as the node count allows;
//   3. best fit: the fewest GPUs left free on the nodes it uses, so whole nodes stay whole for
//      big gangs (fullest nodes first);
//   4. dataset locality: nodes that already cache the gang's datasets (Node::cached_datasets);
//   5. node names, so the result is deterministic.
// Topology is a preference, never a reason not to place: a gang that fits anywhere is placed. A
// gang on one node is packed already: then best fit and locality alone decide.
//
// How: the fewest nodes k a placement can use is known up front (the k roomiest nodes). Within a
// domain (for Pack, each clique, rack and zone, and the whole cluster last), nodes are chosen one
// by one, each time the tightest node that still lets the rest of the gang fit on the remaining
// k − 1 roomiest nodes (a node sharing a smaller domain — zone, rack, clique — with those already
// chosen goes first); that node takes as many workers as it can. The best domain's placement
// wins. For Spread, the same greedy over the whole cluster prefers a node in a zone (rack,
// clique) not yet used. O(levels × N log N + k × N) for N candidate nodes.
#pragma once

#include "scheduler/placement_policy.h"

namespace dljob::scheduler {

PlacementPolicyPtr NewDljobPolicy(const PlacementOptions& options);

}  // namespace dljob::scheduler
