// Feasibility: whether a node can take a worker of a gang, how many it can take, and — when a
// gang does not fit — why, in kube-scheduler's words. The one definition of these rules: every
// placement policy, the GPU ledger and the queue's admission check call these functions.
//
// A node takes a worker when it is schedulable, its labels match the gang's nodeSelector and
// required node affinity, the gang tolerates its NoSchedule/NoExecute taints, and every resource
// the node accounts for has room for one more worker's request. GPUs are always accounted; CPU,
// memory and pods only when the node's allocatable amount is above zero (cluster.h). Because every
// worker of a gang asks for the same resources, a node's room is a whole number of workers (its
// slots), and a gang fits somewhere exactly when the slots of all nodes add up to its workers.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "scheduler/cluster.h"

namespace dljob::scheduler {

// Whether the tolerations allow a pod onto a node with these taints (NoSchedule and NoExecute
// taints must be tolerated; PreferNoSchedule never blocks). Kubernetes matching: an empty
// toleration effect matches every effect, operator Exists matches any value, and an empty key
// with Exists tolerates every taint.
bool ToleratesTaints(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);
// The first taint the tolerations do not allow, or nullptr.
const Taint* FirstUntoleratedTaint(const std::vector<Toleration>& tolerations,
                                   const std::vector<Taint>& taints);

// Every key of the selector is a label with that value.
bool MatchesNodeSelector(const std::map<std::string, std::string>& selector,
                         const std::map<std::string, std::string>& labels);
// One requirement, as Kubernetes defines it: In (present, one of values), NotIn (absent or none
// of values), Exists, DoesNotExist, Gt/Lt (present, and the label and the single value both
// integers with label > / < value). Any other operator matches nothing.
bool MatchesRequirement(const NodeSelectorRequirement& requirement,
                        const std::map<std::string, std::string>& labels);
// Required node affinity: true when `terms` is empty, else when any term has all of its
// requirements matched (a term with no requirements matches no node).
bool MatchesNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                         const std::map<std::string, std::string>& labels);

// What is free on the node (allocatable − used, never below 0) of each resource.
Resources Free(const Node& node);
// How many workers of `per_worker` fit in the node's free resources, at most `cap`: the least,
// over the resources the node accounts for and the worker asks for, of free / asked.
int64_t Slots(const Node& node, const Resources& per_worker, int64_t cap);
// Slots after `placed` more workers of `per_worker` went there (for policies that place one
// worker at a time without copying nodes).
int64_t SlotsAfter(const Node& node, const Resources& per_worker, int64_t placed, int64_t cap);

// Whether a node passes the filters that do not depend on free resources: schedulable,
// nodeSelector, required affinity, taints.
bool Eligible(const Gang& gang, const Node& node);

// A node that can take at least one worker of the gang, and how many (capped at the gang's size).
struct Candidate {
  const Node* node = nullptr;
  int64_t slots = 0;
};
// The nodes that can take a worker, ordered by name (names are unique in a cluster). The
// pointers point into `nodes`.
std::vector<Candidate> Candidates(const Gang& gang, const std::vector<Node>& nodes);
// Sum of the candidates' slots.
int64_t Room(const std::vector<Candidate>& candidates);

// kFailedPrecondition saying why the gang does not fit: the gang's demand and what the eligible
// nodes have, then, per reason, how many nodes could not take even one worker, e.g.
//   needs 2 workers × 8 GPUs (A100), room for 1: 12 free GPUs on 5 eligible nodes, largest 8;
//   1/8 nodes are available: 3 Insufficient nvidia.com/gpu, 2 node(s) didn't match node
//   selector, 1 node(s) had untolerated taint {k: v}, 1 node(s) were unschedulable
Status Unplaceable(const Gang& gang, const std::vector<Node>& nodes);
// Unplaceable when `explain`; else kFailedPrecondition "the gang does not fit", at no cost.
Status Unplaceable(const Gang& gang, const std::vector<Node>& nodes, bool explain);

}  // namespace dljob::scheduler
