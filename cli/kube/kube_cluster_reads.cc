// KubeBackend as a ClusterReader (cluster_reader.h): nodes, bound pods, DLQueues and DLJobs in
// every namespace, for `dljob top nodes` and `dljob queue`.
#include <algorithm>

#include "base/json_fields.h"
#include "cli/kube/kube_backend.h"
#include "jobs/dlqueue_codec.h"

namespace dljob {
namespace {

using kube::Json;

constexpr char kInstallHint[] =
    "; install dljob there first (its chart brings the CRDs): helm install dljob charts/dljob "
    "-n dljob-system --create-namespace";

// A DLQueue from the API. Fields this build does not know (a newer operator) do not hide the
// queue: what could be read is shown, as for DLJobs.
DLQueue DecodeQueue(const Json& object) { return DecodeQueueTree(object).queue; }

bool HoldsResources(const Json& pod) {
  std::string phase = StringAt(FieldOf(pod, "status"), "phase");
  return !StringAt(FieldOf(pod, "spec"), "nodeName").empty() && phase != "Succeeded" &&
         phase != "Failed";
}

}  // namespace

Result<std::vector<Json>> KubeBackend::Items(const kube::Resource& r, const std::string& ns,
                                             const kube::ListOptions& options,
                                             const std::string& what) {
  kube::ApiResult<Json> list = kube::ListAll(api_, r, ns, options);
  if (!list.ok()) {
    if (list.error().IsNotFound() && !r.group.empty()) {
      return Status::FailedPrecondition(what + ": the cluster does not know " + r.kind + "s" +
                                        kInstallHint);
    }
    return Failure(list.error(), what,
                   "list " + r.plural + (r.namespaced ? " in every namespace" : ""));
  }
  std::vector<Json> items;
  if (const Json& got = FieldOf(*list, "items"); got.is_array()) {
    items.assign(got.begin(), got.end());
  }
  return items;
}

Result<std::vector<Json>> KubeBackend::Nodes() {
  return Items(kube::resources::kNodes, "", {}, "listing nodes");
}

Result<std::vector<Json>> KubeBackend::BoundPods() {
  kube::ListOptions options;
  // What kube-scheduler's informer of assigned pods asks for; filtered here again, for a server
  // that ignores part of the selector.
  options.field_selector = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed";
  options.limit = 500;  // in pages, as kubectl reads a big cluster's pods
  Result<std::vector<Json>> pods =
      Items(kube::resources::kPods, "", options, "listing pods in all namespaces");
  if (pods.ok()) std::erase_if(*pods, [](const Json& pod) { return !HoldsResources(pod); });
  return pods;
}

Result<std::vector<DLQueue>> KubeBackend::Queues() {
  Result<std::vector<Json>> items = Items(kube::resources::kDLQueues, "", {}, "listing DLQueues");
  if (!items.ok()) return items.status();
  std::vector<DLQueue> queues;
  for (const Json& item : *items) queues.push_back(DecodeQueue(item));
  std::sort(queues.begin(), queues.end(),
            [](const DLQueue& a, const DLQueue& b) { return a.metadata.name < b.metadata.name; });
  return queues;
}

Result<DLQueue> KubeBackend::Queue(const std::string& name) {
  kube::ApiResult<Json> queue = api_.Get(kube::resources::kDLQueues, "", name);
  if (!queue.ok()) {
    if (queue.error().IsNotFound()) return Status::NotFound("no DLQueue \"" + name + "\"");
    return Failure(queue.error(), "reading DLQueue " + name, "get dlqueues.dljob.io");
  }
  return DecodeQueue(*queue);
}

Result<std::vector<DLJob>> KubeBackend::JobsInAllNamespaces() { return ListJobs(""); }

}  // namespace dljob
