// dljob top nodes: the cluster's nodes — GPUs allocated and free, product, NVLink clique,
// whether they take new pods — and a summary per GPU product (node_report.h).
#include <memory>

#include "cli/cluster_command.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/node_report.h"
#include "cli/output.h"

namespace dljob {

int RunTopNodes(const TopNodesOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = ParseOutputFormat(options.output);
  if (!format.ok()) {
    PrintError(ctx, format.status().message(), "use -o json, -o yaml or -o wide");
    return kExitUsage;
  }
  Result<BackendPtr> backend = ctx.make_backend();
  ClusterReader* cluster = RequireCluster(ctx, backend, "dljob top nodes");
  if (cluster == nullptr) return kExitFailed;
  Result<std::vector<nlohmann::json>> nodes = cluster->Nodes();
  if (!nodes.ok()) {
    PrintError(ctx, nodes.status().message());
    return kExitFailed;
  }
  Result<std::vector<nlohmann::json>> pods = cluster->BoundPods();
  if (!pods.ok()) {
    PrintError(ctx, pods.status().message());
    return kExitFailed;
  }
  if (nodes->empty() && (*format == OutputFormat::kTable || *format == OutputFormat::kWide)) {
    ctx.err << "The cluster has no nodes.\n";
    return kExitOk;
  }
  ctx.out << FormatNodeReport(BuildNodeReport(*nodes, *pods), *format);
  return kExitOk;
}

void AddTopNodesCommand(CommandRegistry& registry, CLI::App* top) {
  auto o = std::make_shared<TopNodesOptions>();
  CLI::App* cmd = registry.Add(
      "nodes", "Show the cluster's nodes: GPUs allocated and free, product, clique",
      [o](CommandShared& shared) { return RunTopNodes(*o, shared.ctx); }, top);
  cmd->add_option("-o,--output", o->output, "json, yaml or wide (CPU, memory, pods, zone, rack)");
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/false,
                  /*with_all_namespaces=*/false);
  cmd->footer(kClusterRule);
  top->description(top->get_description() + " (top nodes: the cluster's GPUs per node)");
}

}  // namespace dljob
