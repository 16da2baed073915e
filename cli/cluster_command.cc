#include "cli/cluster_command.h"

namespace dljob {

const char kClusterRule[] =
    "Reads the Kubernetes cluster of --kubeconfig, else $KUBECONFIG, else the pod's service\n"
    "account, else ~/.kube/config (--context picks a context). There is no --local form: a\n"
    "machine on its own has no nodes or queues to show.";

ClusterReader* RequireCluster(CliContext& ctx, Result<BackendPtr>& backend,
                              const std::string& command) {
  if (!backend.ok()) {
    PrintError(ctx, backend.status().message());
    return nullptr;
  }
  ClusterReader* cluster = (*backend)->Cluster();
  if (cluster == nullptr) {
    PrintError(ctx,
               command +
                   " reads a Kubernetes cluster, and none is configured (looked for "
                   "--kubeconfig, $KUBECONFIG, an in-cluster service account and "
                   "~/.kube/config)",
               "pass --kubeconfig FILE or set $KUBECONFIG (this machine's jobs: dljob list)");
  }
  return cluster;
}

}  // namespace dljob
