// KubeBackend: the cluster backend. Jobs are DLJob objects in a Kubernetes cluster; the
// dljob-operator running there places and runs them, and keeps their status.
//
// Submit creates the DLJob and returns at once with the created object (phase still unset or
// Queued). A job with no name is sent with its metadata.generateName and comes back with the name
// the API server chose; the server draws again when a name is taken (Kubernetes 1.31+), so
// Submit never retries such a create. List/Get read DLJobs in the backend's namespace (List: in
// every namespace when all_namespaces). Delete deletes the DLJob with background propagation; the
// garbage collector removes its pods, service, config map and secret. Logs print the launcher pod's
// log (launcher_log.h). It is its own ClusterReader (cluster_reader.h): nodes, bound pods, DLQueues
// and DLJobs in every namespace, for `dljob top nodes` and `dljob queue`. Every API failure comes
// back as a Status naming the object and the cluster, with what to do when the cause is a common
// one (operator not installed, cluster unreachable).
//
// The Api is either owned or borrowed (tests); a borrowed one must outlive the backend. Like
// every Backend, used from one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cli/backend/backend.h"
#include "cli/kube/launcher_log.h"
#include "kube/api.h"
#include "kube/config.h"

namespace dljob {

struct KubeBackendOptions {
  std::string namespace_ = "default";  // for Get/Delete/Logs, and List unless all_namespaces
  bool all_namespaces = false;
  std::string cluster;  // for messages: "https://10.0.0.1:6443 (kubeconfig /x, context y)"
  // Where the one-second waits between polls go while following a log (the launcher not started
  // yet, a restart): RealClock() when null; tests pass a testing::FakeClock. Must outlive the
  // backend.
  Clock* clock = nullptr;
  // Where `logs` of a finished job reads the operator's archive (launcher_log.h).
  OperatorService archive;
};

class KubeBackend : public Backend, public ClusterReader {
 public:
  KubeBackend(std::unique_ptr<kube::Api> api, KubeBackendOptions options);
  KubeBackend(kube::Api& api, KubeBackendOptions options);  // borrowed

  std::string Name() const override { return "kubernetes"; }
  std::string Namespace() const override { return options_.namespace_; }
  Result<DLJob> Submit(const DLJob& job, JobObserver& observer) override;
  Result<std::vector<DLJob>> List() override;
  Result<DLJob> Get(const std::string& name) override;
  Status Logs(const std::string& name, const LogOptions& options, std::ostream& out) override;
  Status Delete(const std::string& name) override;
  ClusterReader* Cluster() override { return this; }

  // ClusterReader (kube_cluster_reads.cc).
  Result<std::vector<kube::Json>> Nodes() override;
  Result<std::vector<kube::Json>> BoundPods() override;
  Result<std::vector<DLQueue>> Queues() override;
  Result<DLQueue> Queue(const std::string& name) override;
  Result<std::vector<DLJob>> JobsInAllNamespaces() override;

 private:
  // An API error as a Status: "<what>: <error>", with advice for the common causes; `permission`
  // is what the user must be allowed to do, for a 401/403.
  Status Failure(const kube::ApiError& error, const std::string& what,
                 const std::string& permission = "manage dljobs.dljob.io in this namespace") const;
  // DLJobs in `ns` ("" every namespace), newest first.
  Result<std::vector<DLJob>> ListJobs(const std::string& ns);
  // Every object of `r` in `ns` ("" all namespaces), its items; `what` names them for errors.
  Result<std::vector<kube::Json>> Items(const kube::Resource& r, const std::string& ns,
                                        const kube::ListOptions& options, const std::string& what);

  std::unique_ptr<kube::Api> owned_;
  kube::Api& api_;
  KubeBackendOptions options_;
};

// The backend for the cluster `flags` name: loads the config (kube/config.h's lookup order),
// builds the HTTP Api. The namespace is `namespace_` if given, else the context's.
Result<BackendPtr> MakeKubeBackend(const kube::ConfigSource& source, const std::string& namespace_,
                                   bool all_namespaces);

}  // namespace dljob
