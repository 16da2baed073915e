// dljob list | get | logs | delete
#include <chrono>

#include "cli/commands.h"
#include "cli/output.h"

namespace dljob {
namespace {

// Prints a backend error with the hint that fits it; returns the exit code.
int Fail(CliContext& ctx, const Status& s) {
  std::string hint;
  if (s.code() == StatusCode::kNotFound) hint = "list jobs with: dljob list";
  PrintError(ctx, s.message(), hint);
  return kExitFailed;
}

Result<OutputFormat> Format(CliContext& ctx, const std::string& name) {
  Result<OutputFormat> f = ParseOutputFormat(name);
  if (!f.ok()) PrintError(ctx, f.status().message(), "use -o json, -o yaml or -o wide");
  return f;
}

}  // namespace

int RunList(const ListOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = Format(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Result<std::vector<DLJob>> jobs = (*backend)->List();
  if (!jobs.ok()) return Fail(ctx, jobs.status());
  if (jobs->empty() && (*format == OutputFormat::kTable || *format == OutputFormat::kWide)) {
    ctx.err << "No jobs found. Run one with: dljob submit --local -f examples/mnist-job.yaml\n";
    return kExitOk;
  }
  ctx.out << FormatJobs(*jobs, *format, std::chrono::system_clock::now());
  return kExitOk;
}

int RunGet(const GetOptions& options, CliContext& ctx) {
  Result<OutputFormat> format = Format(ctx, options.output);
  if (!format.ok()) return kExitUsage;
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Result<DLJob> job = (*backend)->Get(options.name);
  if (!job.ok()) return Fail(ctx, job.status());
  ctx.out << FormatJob(*job, *format, std::chrono::system_clock::now());
  return kExitOk;
}

int RunLogs(const LogsOptions& options, CliContext& ctx) {
  if (options.rank && *options.rank < 0) {
    PrintError(ctx, "--rank must be 0 or more, got " + std::to_string(*options.rank));
    return kExitUsage;
  }
  Result<BackendPtr> backend = ctx.make_backend();
  if (!backend.ok()) return Fail(ctx, backend.status());
  Status s = (*backend)->Logs(options.name, {options.follow, options.rank}, ctx.out);
  return s.ok() ? kExitOk : Fail(ctx, s);
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
      code = Fail(ctx, s);
    }
  }
  return code;
}

}  // namespace dljob
