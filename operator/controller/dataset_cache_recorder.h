// RecordWarmCaches: the one API write of data locality (dataset_cache.h) — a merge patch of the
// Node's dljob.io/cached-datasets annotation when a job's pod has proved a dataset's cache warm
// there. The controller calls it from its job-pod informer's add and update handlers.
//
// Best effort by design: the record only steers placement's last preference, so an error is
// returned for the caller to log and nothing is retried beyond a stale resourceVersion. Each call
// that has something to record reads the Node fresh (GET), so two pods warming different datasets
// on one node at once cannot drop each other's entry: the patch carries the resourceVersion it
// was computed from, and a 409 Conflict starts over, at most kAttempts times.
//
// Needs RBAC get and patch on nodes. Thread-safe as the Api and Store are; blocks for the API
// calls (only when the pod proves something the node does not already list).
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kube/api.h"
#include "kube/runtime/store.h"

namespace dljob::controller {

// For an update, `old_pod` is the pod before the change and only what the change proved is
// recorded (moved to the front of the node's list if there already). For an add (`old_pod`
// null: a new pod, or every pod again when the operator starts) what the node's cached object in
// `nodes` already lists is skipped, so a restart writes nothing new. OK when there was nothing to
// do or the node is gone.
Status RecordWarmCaches(kube::Api& api, const kube::Store& nodes, const nlohmann::json* old_pod,
                        const nlohmann::json& pod);

}  // namespace dljob::controller
