// ClusterReader: what `dljob top nodes` and `dljob queue list|get` read from a cluster — its
// nodes, the pods that hold resources on them, its DLQueues, and DLJobs in every namespace.
//
// Only a backend with a cluster has one (Backend::Cluster(); KubeBackend implements it); the local
// backend has none, and those commands say they need a cluster. Nodes and pods come as the API
// server sends them (Kubernetes JSON): scheduler/kube_objects.h reads them, the same
// reading the operator's ledger uses. Errors name what was read and the cluster, and say what to
// do for the common causes (unreachable, forbidden, DLQueues not installed).
//
// Owned by its backend; used from one thread, like the backend.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "jobs/dlqueue_types.h"

namespace dljob {

class ClusterReader {
 public:
  virtual ~ClusterReader() = default;

  // Every Node object.
  virtual Result<std::vector<nlohmann::json>> Nodes() = 0;
  // The pods that hold resources on a node: bound (spec.nodeName set) and neither Succeeded nor
  // Failed, in every namespace.
  virtual Result<std::vector<nlohmann::json>> BoundPods() = 0;
  // Every DLQueue, by name.
  virtual Result<std::vector<DLQueue>> Queues() = 0;
  // One DLQueue; kNotFound naming it when there is none.
  virtual Result<DLQueue> Queue(const std::string& name) = 0;
  // DLJobs in every namespace, whatever namespace the backend was given.
  virtual Result<std::vector<DLJob>> JobsInAllNamespaces() = 0;
};

}  // namespace dljob
