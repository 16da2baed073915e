// Node loss: a node under a running job that has stopped being Ready — its kubelet gone, the node
// lifecycle controller marking its Ready condition Unknown (or the kubelet reporting False). Once
// that has lasted `grace`, the node counts as lost: the reconciler restarts the whole job on the
// nodes that remain (Restarting/NodeLost, status.disruptionRestarts), and deletes the pods there
// at once (grace period 0), since no kubelet will confirm a graceful delete. Until then the job is
// left alone: a kubelet restart or a short partition is not a loss.
//
// The time is the Ready condition's lastTransitionTime; a node without one is not judged. Nodes
// come from the operator's node informer (a kube::Store keyed by name); a node it does not hold
// (deleted) is not judged here either — the pod garbage collector removes its pods, which the
// reconciler sees as lost workers.
//
// A cordoned node (spec.unschedulable: kubectl cordon, or the first half of kubectl drain) under a
// running job is not lost, but is to be emptied: the reconciler moves the whole job off it, from
// its checkpoint, once the other nodes can hold it (Restarting/NodeCordoned), and the job's
// PodDisruptionBudget keeps drain from evicting its pods one by one meanwhile.
//
// Pure apart from reading the store; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/time_format.h"
#include "kube/runtime/duration.h"
#include "kube/runtime/store.h"

namespace dljob::controller {

struct NodeLoss {
  std::string node;
  WallTime due;  // when it counts as lost: not Ready since + grace
  // For a person: "node n2 has not been Ready since 2026-11-27T10:02:03Z (Unknown,
  // NodeStatusUnknown: Kubelet stopped posting node status.)".
  std::string message;
};

// The node of `node` JSON that has not been Ready since when; nullopt when it is Ready or the
// time is not known.
std::optional<WallTime> NotReadySince(const nlohmann::json& node);

// The node under `pods` (those bound and not being deleted) whose loss is due first; nullopt
// when every one is Ready or unknown to `nodes`.
std::optional<NodeLoss> FindNodeLoss(const std::vector<nlohmann::json>& pods,
                                     const kube::Store& nodes, kube::Duration grace);

// The first node under `pods` (bound, not being deleted) that is cordoned; nullopt when none is,
// or none is known to `nodes`.
std::optional<std::string> CordonedNodeUnder(const std::vector<nlohmann::json>& pods,
                                             const kube::Store& nodes);

// Whether `pod` is bound to a node that is lost at `now`.
bool OnLostNode(const nlohmann::json& pod, const kube::Store& nodes, kube::Duration grace,
                WallTime now);

}  // namespace dljob::controller
