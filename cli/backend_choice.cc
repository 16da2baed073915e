#include "cli/backend_choice.h"

#include <cstdlib>
#include <filesystem>

namespace dljob {

ClusterHints ProbeClusterHints() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  ClusterHints hints;
  hints.kubeconfig_env = set("KUBECONFIG");
  hints.in_cluster = set("KUBERNETES_SERVICE_HOST");
  if (set("HOME")) {
    std::error_code ec;
    hints.home_kubeconfig =
        std::filesystem::exists(std::string(std::getenv("HOME")) + "/.kube/config", ec);
  }
  return hints;
}

Result<BackendKind> ChooseBackend(const BackendFlags& flags, bool needs_cluster,
                                  const ClusterHints& hints) {
  if (flags.local) {
    if (!flags.kubeconfig.empty() || !flags.context.empty()) {
      return Status::InvalidArgument(
          "--local runs on this machine; it cannot be combined with --kubeconfig or --context");
    }
    return BackendKind::kLocal;
  }
  if (!flags.kubeconfig.empty() || hints.kubeconfig_env || hints.in_cluster ||
      hints.home_kubeconfig) {
    return BackendKind::kCluster;
  }
  std::string why;
  if (needs_cluster) {
    why = "";
  } else if (!flags.context.empty()) {
    why = "--context";
  } else if (!flags.namespace_.empty()) {
    why = "--namespace";
  } else if (flags.all_namespaces) {
    why = "--all-namespaces";
  } else {
    return BackendKind::kLocal;
  }
  return Status::FailedPrecondition(
      std::string("no cluster configured") + (why.empty() ? "" : " for " + why) +
      ": pass --kubeconfig or use --local (looked for --kubeconfig, $KUBECONFIG, an in-cluster "
      "service account and ~/.kube/config)");
}

}  // namespace dljob
