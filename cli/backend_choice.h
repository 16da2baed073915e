// Which backend a command uses: this machine (LocalBackend) or the cluster of the kubeconfig.
//
// The rule, as `dljob --help` and docs/tasks/cluster.md state it:
//   --local                      → this machine, always.
//   a cluster is configured      → the cluster. "Configured" means any of: --kubeconfig FILE,
//                                  $KUBECONFIG, a pod's service account ($KUBERNETES_SERVICE_HOST),
//                                  or an existing ~/.kube/config — the places kubectl looks.
//   no cluster configured        → submit fails ("no cluster configured: pass --kubeconfig or use
//                                  --local"); list/get/logs/delete/top read this machine's jobs,
//                                  so people who never had a cluster see no change. Cluster-only
//                                  flags (--context, -n, -A) without a cluster fail the same way.
// --kubeconfig or --context together with --local is a usage error.
//
// ChooseBackend is pure: what it knows of the environment comes in ClusterHints
// (ProbeClusterHints reads the environment and $HOME). Thread-safe.
#pragma once

#include <string>

#include "base/status.h"

namespace dljob {

// The backend flags every job command takes (main.cc binds them).
struct BackendFlags {
  bool local = false;
  std::string kubeconfig;       // --kubeconfig
  std::string context;          // --context
  std::string namespace_;       // -n/--namespace
  bool all_namespaces = false;  // -A/--all-namespaces (list, top)
};

// What the environment says about a cluster.
struct ClusterHints {
  bool kubeconfig_env = false;   // $KUBECONFIG is set and not empty
  bool in_cluster = false;       // $KUBERNETES_SERVICE_HOST is set
  bool home_kubeconfig = false;  // ~/.kube/config exists
};
ClusterHints ProbeClusterHints();

enum class BackendKind { kLocal, kCluster };

// `needs_cluster` is true for commands that only make sense on a cluster without --local
// (submit). Errors: kInvalidArgument for conflicting flags, kFailedPrecondition when a cluster is
// needed and none is configured; both messages say what to do.
Result<BackendKind> ChooseBackend(const BackendFlags& flags, bool needs_cluster,
                                  const ClusterHints& hints);

}  // namespace dljob
