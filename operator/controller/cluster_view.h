// The ledger's view of Kubernetes objects. Reading a Node as a scheduler::Node and counting what a
// Pod takes from its node live in scheduler/kube_objects.h, shared with `dljob top
// nodes`; they are named here too, for the ledger (gpu_ledger.h), the node with what only the
// operator knows: the datasets warm there. This file also has the informer transform that keeps
// the ledger's pod cache small, and the one that keeps the cache of the jobs' own pods to what the
// operator reads of them. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "scheduler/kube_objects.h"

namespace dljob::controller {

using scheduler::PodRequests;

// scheduler::SchedulerNodeOf, plus the datasets warm on the node (its dljob.io/cached-datasets
// annotation, dataset_cache.h): the node as the operator's placement sees it.
scheduler::Node SchedulerNodeOf(const nlohmann::json& node);

// Only the fields of a pod the ledger reads (metadata name/namespace/uid/resourceVersion,
// spec.nodeName, the containers' and init containers' resources, spec.overhead, status.phase): an
// informer transform, so a cache of every bound pod in the cluster stays small.
nlohmann::json LedgerPodView(const nlohmann::json& pod);

// A job's pod as the operator keeps it in its cache (an informer transform): metadata without
// managedFields; of the status the phase, reason, message, podIP, the conditions whole (a
// PodScheduled patch writes them back) and each container's and init container's name and state
// (not its image, IDs, last state or counters); and of the spec what scheduling and the reconciler
// read — the node, hostAliases, scheduling fields (nodeSelector, affinity, tolerations, priority,
// scheduler name), terminationGracePeriodSeconds, spec.overhead, and each container's and init
// container's name, image and resources. What the pod runs (command, args, env, volume mounts,
// probes, security contexts) and spec.volumes are left out: the operator builds pods, it never
// writes a cached one back or reads those fields of it. Those are most of a pod's bytes.
nlohmann::json JobPodView(const nlohmann::json& pod);

// A Node as the operator keeps it (an informer transform): the whole node but managedFields and
// status.images, the list of every image on the node with its sizes, which the kubelet reports
// and no part of the operator reads; on a real node it is most of the object.
nlohmann::json NodeView(const nlohmann::json& node);

// A job's SSH Secret as the operator keeps it (an informer transform): apiVersion, kind and
// metadata without managedFields. The reconciler reads only whether it exists and who owns it, so
// the private keys (a few KB a job) stay out of the operator's memory.
nlohmann::json SecretMetadataView(const nlohmann::json& secret);

}  // namespace dljob::controller
