// dljob list | get | logs | delete | top
#include <algorithm>
#include <chrono>
#include <memory>

#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace dljob {
namespace {

// Prints a backend error with the hint that fits it; returns the exit code. `backend` is null
// when the backend itself could not be made (its message says what to do).
int Fail(CliContext& ctx, const Status& s, const Backend* backend = nullptr) {
  std::string hint;
  if (s.code() == StatusCode::kNotFound && backend != nullptr) {
    hint = backend->Name() == "local"
               ? "list jobs with: dljob list"
               : "list jobs with: dljob list (-A: every namespace; --local: this machine's jobs)";
  }
  PrintError(ctx, s.message(), hint);
  return s.code() == StatusCode::kInvalidArgument && backend == nullptr ? kExitUsage : kExitFailed;
}

void PrintNoJobs(CliContext& ctx, const Backend& backend, bool all_namespaces) {
  if (backend.Name() == "local") {
    ctx.err << "No jobs found. Run one with: dljob submit --local -f examples/mnist-job.yaml\n";
  } else if (all_namespaces) {
    ctx.err << "No DLJobs found in any namespace.\n";
  } else {
    ctx.err << "No DLJobs found in namespace \"" << backend.Namespace() << "\".\n";
  }
}

}  // namespace

int RunList(const ListOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = ParseOutputFlag(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Result<std::vector<DLJob>> jobs = (*backend)->List();
  if (!jobs.ok()) return Fail(ctx, jobs.status(), backend->get());
  if (jobs->empty() && (*format == OutputFormat::kTable || *format == OutputFormat::kWide)) {
    PrintNoJobs(ctx, **backend, options.all_namespaces);
    return kExitOk;
  }
  ctx.out << FormatJobs(*jobs, *format, ctx.clock.Now(), options.all_namespaces);
  return kExitOk;
}

int RunTop(const TopOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = ParseOutputFlag(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Result<std::vector<DLJob>> jobs = (*backend)->List();
  if (!jobs.ok()) return Fail(ctx, jobs.status(), backend->get());
  if (!options.all) {
    std::erase_if(*jobs, [](const DLJob& job) { return IsFinished(job.status.phase); });
  }
  if (jobs->empty() && (*format == OutputFormat::kTable || *format == OutputFormat::kWide)) {
    ctx.err << "No unfinished jobs" << (options.all ? "" : " (all jobs: dljob top --all)") << ".\n";
    return kExitOk;
  }
  ctx.out << FormatTop(*jobs, *format, ctx.clock.Now(), options.all_namespaces);
  return kExitOk;
}

int RunGet(const GetOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = ParseOutputFlag(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Result<DLJob> job = (*backend)->Get(options.name);
  if (!job.ok()) return Fail(ctx, job.status(), backend->get());
  ctx.out << FormatJob(*job, *format, ctx.clock.Now());
  return kExitOk;
}

int RunLogs(const LogsOptions& options, CliContext& ctx) {
  if (options.rank && *options.rank < 0) {
    PrintError(ctx, "--rank must be 0 or more, got " + std::to_string(*options.rank));
    return kExitUsage;
  }
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Status s = (*backend)->Logs(options.name, {options.follow, options.rank, &ctx.err}, ctx.out);
  return s.ok() ? kExitOk : Fail(ctx, s, backend->get());
}

int RunDelete(const DeleteOptions& options, CliContext& ctx) {
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  int code = kExitOk;
  for (const std::string& name : options.names) {
    Status s = (*backend)->Delete(name);
    if (s.ok()) {
      ctx.out << "dljob \"" << name << "\" deleted\n";
    } else if (!(s.code() == StatusCode::kNotFound && options.ignore_not_found)) {
      code = Fail(ctx, s, backend->get());
    }
  }
  return code;
}

void AddListCommand(CommandRegistry& registry) {
  auto o = std::make_shared<ListOptions>();
  CLI::App* cmd = registry.Add("list", "List jobs", [o](CommandShared& shared) {
    o->all_namespaces = shared.backend.all_namespaces;
    return RunList(*o, shared.ctx);
  });
  cmd->alias("ls");
  cmd->add_option("-o,--output", o->output, "json, yaml or wide");
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/true);
}

void AddGetCommand(CommandRegistry& registry) {
  auto o = std::make_shared<GetOptions>();
  CLI::App* cmd = registry.Add("get", "Show one job",
                               [o](CommandShared& shared) { return RunGet(*o, shared.ctx); });
  cmd->add_option("name", o->name, "Job name")->required();
  cmd->add_option("-o,--output", o->output, "json, yaml or wide");
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/false);
}

void AddLogsCommand(CommandRegistry& registry) {
  auto o = std::make_shared<LogsOptions>();
  CLI::App* cmd = registry.Add("logs", "Print a job's output (all ranks, tagged)",
                               [o](CommandShared& shared) { return RunLogs(*o, shared.ctx); });
  cmd->add_option("name", o->name, "Job name")->required();
  cmd->add_flag("-f,--follow", o->follow, "Keep printing until the job finishes");
  cmd->add_option("--rank", o->rank, "Only this rank's lines");
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/false);
}

void AddDeleteCommand(CommandRegistry& registry) {
  auto o = std::make_shared<DeleteOptions>();
  CLI::App* cmd = registry.Add("delete", "Stop a job if it runs and remove it and its record",
                               [o](CommandShared& shared) { return RunDelete(*o, shared.ctx); });
  cmd->add_option("names", o->names, "Job names")->required();
  cmd->add_flag("--ignore-not-found", o->ignore_not_found, "Succeed if a job does not exist");
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/false);
}

void AddTopCommand(CommandRegistry& registry) {
  auto o = std::make_shared<TopOptions>();
  CLI::App* cmd = registry.Add("top", "Show unfinished jobs with their GPUs and images/sec",
                               [o](CommandShared& shared) {
                                 o->all_namespaces = shared.backend.all_namespaces;
                                 return RunTop(*o, shared.ctx);
                               });
  cmd->add_option("-o,--output", o->output, "json, yaml or wide");
  cmd->add_flag("-a,--all", o->all, "Finished jobs too");
  AddBackendFlags(cmd, registry.shared().backend, /*with_local_and_namespace=*/true,
                  /*with_all_namespaces=*/true);
  AddTopNodesCommand(registry, cmd);
}

}  // namespace dljob
