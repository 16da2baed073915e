// The ledger's view of Kubernetes objects. Reading a Node as a scheduler::Node and counting what a
// Pod takes from its node live in operator/scheduler/kube_objects.h, shared with `dljob top
// nodes`; they are named here too, for the ledger (gpu_ledger.h). This file adds the informer
// transform that keeps the ledger's pod cache small. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "operator/scheduler/kube_objects.h"

namespace dljob::controller {

using scheduler::PodRequests;
using scheduler::SchedulerNodeOf;

// Only the fields of a pod the ledger reads (metadata name/namespace/uid/resourceVersion,
// spec.nodeName, the containers' and init containers' resources, spec.overhead, status.phase): an
// informer transform, so a cache of every bound pod in the cluster stays small.
nlohmann::json LedgerPodView(const nlohmann::json& pod);

}  // namespace dljob::controller
