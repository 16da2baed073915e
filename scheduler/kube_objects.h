// The scheduler's view of Kubernetes objects: a Node object as a scheduler::Node (cluster.h) and
// what a Pod takes from its node, counted as kube-scheduler counts it. One reading for everyone
// who needs it: the operator's GPU ledger (operator/controller/gpu_ledger.h) feeds placement from
// informers with it, and `dljob top nodes` (cli/node_report.h) shows a cluster with it, so the
// CLI's "allocated" is the operator's. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "scheduler/cluster.h"

namespace dljob::scheduler {

// The placer's view of one Node object: name, labels, taints, schedulable (not cordoned and
// Ready), and status.allocatable nvidia.com/gpu, cpu (millicores), memory (MiB, rounded down) and
// pods. `used` and cached datasets are left empty: the ledger fills in the use.
Node SchedulerNodeOf(const nlohmann::json& node);

// spec.unschedulable (kubectl cordon).
bool NodeCordoned(const nlohmann::json& node);
// The node's status condition of type Ready; null when it has none.
const nlohmann::json* NodeReadyCondition(const nlohmann::json& node);
// The Ready condition is True; a node that reports no conditions at all is taken at its word.
bool NodeReady(const nlohmann::json& node);

// What a pod takes from its node (resource.PodRequests in Kubernetes): per resource, the sum of
// its containers' requests (a request left out defaults to the limit), or the largest of its init
// containers' when that is more, plus spec.overhead; pods 1. Memory in MiB, rounded up. Quantities
// that do not parse count as 0.
Resources PodRequests(const nlohmann::json& pod);

}  // namespace dljob::scheduler
