// The scheduler's view of Kubernetes objects: a Node object as scheduler::Node (cluster.h) and
// what a Pod takes from its node, counted as kube-scheduler counts it. The GPU ledger
// (gpu_ledger.h) feeds these from informers. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "operator/scheduler/cluster.h"

namespace dljob::controller {

// The placer's view of one Node object: name, labels, taints, schedulable (not cordoned and
// Ready), status.allocatable nvidia.com/gpu, cpu (millicores), memory (MiB, rounded down) and
// pods, and the datasets warm there (its dljob.io/cached-datasets annotation, dataset_cache.h).
// `used` is left empty: the ledger fills in the use.
scheduler::Node SchedulerNodeOf(const nlohmann::json& node);

// What a pod takes from its node (resource.PodRequests in Kubernetes): per resource, the sum of
// its containers' requests (a request left out defaults to the limit), or the largest of its init
// containers' when that is more, plus spec.overhead; pods 1. Memory in MiB, rounded up. Quantities
// that do not parse count as 0.
scheduler::Resources PodRequests(const nlohmann::json& pod);

// Only the fields of a pod the ledger reads (metadata name/namespace/uid/resourceVersion,
// spec.nodeName, the containers' and init containers' resources, spec.overhead, status.phase): an
// informer transform, so a cache of every bound pod in the cluster stays small.
nlohmann::json LedgerPodView(const nlohmann::json& pod);

}  // namespace dljob::controller
