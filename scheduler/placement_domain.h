// Where a gang was placed, in the topology's words, for what tells a user (the job's WorkersBound
// condition and Event): the tightest domain — NVLink clique, then rack, then zone, the levels the
// dljob policy packs into (dljob_policy.h) — that holds every node the gang was placed on, and
// what it spans below that level. For example:
//   one node:             "dljob-node-1 (clique clique-0, rack rack-0, zone zone-a)"
//   one clique:           "2 nodes of clique clique-0 (rack rack-0, zone zone-a)"
//   one rack:             "2 nodes of rack rack-0 (cliques clique-0, clique-1; zone zone-a)"
//   one zone:             "3 nodes of zone zone-a (cliques c-0, c-1, c-2; racks rack-0, rack-1)"
//   no shared domain:     "2 nodes in no one clique, rack or zone"
// A node's missing label is left out ("dljob-node-1" alone when it has none of them). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster.h"

namespace dljob::scheduler {

// `nodes`: each node the gang uses, once (only name and labels are read); `rack_label` as
// PlacementOptions::rack_label. "" for no nodes.
std::string DescribePlacementDomain(const std::vector<Node>& nodes, std::string_view rack_label);

}  // namespace dljob::scheduler
