// dljob queue list | get NAME: the cluster's DLQueues — quota per GPU product, what is used and
// borrowed, and the jobs of a queue with why each waiting one waits (queue_report.h).
#include <memory>

#include "cli/cluster_command.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/queue_report.h"

namespace dljob {
namespace {

// "a, b and c", or "none".
std::string Names(const std::vector<DLQueue>& queues) {
  std::string out;
  for (size_t i = 0; i < queues.size(); ++i) {
    if (i > 0) out += i + 1 == queues.size() ? " and " : ", ";
    out += queues[i].metadata.name;
  }
  return out;
}

// The error for a queue that does not exist, naming the ones that do.
int NoSuchQueue(CliContext& ctx, ClusterReader& cluster, const std::string& name) {
  Result<std::vector<DLQueue>> queues = cluster.Queues();
  if (!queues.ok()) {
    PrintError(ctx, "no DLQueue \"" + name +
                        "\"; listing the queues failed too: " + queues.status().message());
  } else if (queues->empty()) {
    PrintError(ctx, "no DLQueue \"" + name + "\": the cluster has no queues",
               "create one, e.g. kubectl apply -f examples/queue-default.yaml");
  } else {
    PrintError(ctx, "no DLQueue \"" + name + "\"; the queues are: " + Names(*queues),
               "list them with: dljob queue list");
  }
  return kExitFailed;
}

}  // namespace

int RunQueueList(const QueueListOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = ParseOutputFlag(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  ClusterReader* cluster = RequireCluster(ctx, backend, "dljob queue list");
  if (cluster == nullptr) return kExitFailed;
  Result<std::vector<DLQueue>> queues = cluster->Queues();
  if (!queues.ok()) {
    PrintError(ctx, queues.status().message());
    return kExitFailed;
  }
  if (queues->empty() && (*format == OutputFormat::kTable || *format == OutputFormat::kWide)) {
    ctx.err << "No DLQueues found. Create one with: kubectl apply -f "
               "examples/queue-default.yaml\n";
    return kExitOk;
  }
  ctx.out << FormatQueues(*queues, *format, ctx.clock.Now());
  return kExitOk;
}

int RunQueueGet(const QueueGetOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = ParseOutputFlag(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  ClusterReader* cluster = RequireCluster(ctx, backend, "dljob queue get");
  if (cluster == nullptr) return kExitFailed;
  Result<DLQueue> queue = cluster->Queue(options.name);
  if (!queue.ok()) {
    if (queue.status().code() == StatusCode::kNotFound) {
      return NoSuchQueue(ctx, *cluster, options.name);
    }
    PrintError(ctx, queue.status().message());
    return kExitFailed;
  }
  std::vector<DLJob> jobs;
  if (*format == OutputFormat::kTable || *format == OutputFormat::kWide) {
    Result<std::vector<DLJob>> all = cluster->JobsInAllNamespaces();
    if (!all.ok()) {
      PrintError(ctx, all.status().message());
      return kExitFailed;
    }
    jobs = JobsOfQueue(*all, options.name, options.all);
  }
  ctx.out << FormatQueue(*queue, jobs, *format, ctx.clock.Now());
  return kExitOk;
}

void AddQueueCommands(CommandRegistry& registry) {
  CLI::App* queue = registry.app().add_subcommand(
      "queue", "Show DLQueues: GPU quota, use, and waiting jobs with why (queue list | get NAME)");
  queue->require_subcommand(1);
  queue->footer(kClusterRule);

  auto l = std::make_shared<QueueListOptions>();
  CLI::App* list = registry.Add(
      "list", "List the queues: quota per GPU product, used, borrowed, pending and running jobs",
      [l](CommandShared& shared) { return RunQueueList(*l, shared.ctx); }, queue);
  list->alias("ls");
  list->add_option("-o,--output", l->output, "json, yaml or wide");
  AddBackendFlags(list, registry.shared().backend, /*with_local_and_namespace=*/false,
                  /*with_all_namespaces=*/false);
  list->footer(kClusterRule);

  auto g = std::make_shared<QueueGetOptions>();
  CLI::App* get = registry.Add(
      "get", "Show one queue and its jobs (every namespace), with why each waiting one waits",
      [g](CommandShared& shared) { return RunQueueGet(*g, shared.ctx); }, queue);
  get->add_option("name", g->name, "Queue name")->required();
  get->add_option("-o,--output", g->output, "json, yaml (the DLQueue) or wide");
  get->add_flag("-a,--all", g->all, "Finished jobs too");
  AddBackendFlags(get, registry.shared().backend, /*with_local_and_namespace=*/false,
                  /*with_all_namespaces=*/false);
  get->footer(kClusterRule);
}

}  // namespace dljob
