#include "cli/command_registry.h"

namespace dljob {

const char kBackendRule[] =
    "Where jobs run and are read from:\n"
    "  --local                 this machine (mpirun); jobs recorded under --state-dir\n"
    "  otherwise               the Kubernetes cluster of --kubeconfig, else $KUBECONFIG, else the\n"
    "                          pod's service account, else ~/.kube/config (--context picks a\n"
    "                          context, -n a namespace; default: the context's)\n"
    "  no cluster configured   submit fails (use --local); list, get, logs, delete and top read\n"
    "                          this machine's jobs, as with --local; top nodes and queue\n"
    "                          need a cluster";

CLI::App* CommandRegistry::Add(const std::string& name, const std::string& description,
                               CommandHandler run, CLI::App* parent) {
  CLI::App* cmd = (parent != nullptr ? *parent : app_).add_subcommand(name, description);
  commands_.emplace_back(cmd, std::move(run));
  return cmd;
}

int CommandRegistry::RunChosen() {
  // `top nodes` parses both `top` and `nodes`: the one added last, the deepest, was chosen.
  for (auto it = commands_.rbegin(); it != commands_.rend(); ++it) {
    if (it->first->parsed()) return it->second(shared_);
  }
  return kExitUsage;
}

void AddBackendFlags(CLI::App* cmd, BackendFlags& b, bool with_local_and_namespace,
                     bool with_all_namespaces) {
  if (with_local_and_namespace) {
    cmd->add_flag("--local", b.local, "This machine's jobs, even when a cluster is configured");
    cmd->add_option("-n,--namespace", b.namespace_, "Namespace (default: the context's)");
  }
  cmd->add_option("--kubeconfig", b.kubeconfig,
                  "Kubeconfig file (default: $KUBECONFIG, "
                  "in-cluster, ~/.kube/config)");
  cmd->add_option("--context", b.context, "Kubeconfig context (default: current-context)");
  if (with_all_namespaces) {
    cmd->add_flag("-A,--all-namespaces", b.all_namespaces, "Jobs in every namespace");
  }
  cmd->footer(kBackendRule);
}

Result<OutputFormat> ParseOutputFlag(CliContext& ctx, const std::string& name) {
  Result<OutputFormat> format = ParseOutputFormat(name);
  if (!format.ok()) PrintError(ctx, format.status().message(), "use -o json, -o yaml or -o wide");
  return format;
}

void PrintError(CliContext& ctx, const std::string& cause, const std::string& hint) {
  ctx.err << "error: " << cause << "\n";
  if (!hint.empty()) ctx.err << "hint: " << hint << "\n";
  ctx.err.flush();
}

}  // namespace dljob
