// dljob validate -f FILE
#include "cli/commands.h"
#include "cli/job_loading.h"

namespace dljob {

void PrintError(CliContext& ctx, const std::string& cause, const std::string& hint) {
  ctx.err << "error: " << cause << "\n";
  if (!hint.empty()) ctx.err << "hint: " << hint << "\n";
  ctx.err.flush();
}

int RunValidate(const ValidateOptions& options, CliContext& ctx) {
  Result<DLJob> job = LoadJob(options.file, nullptr, ctx);
  if (!job.ok()) return kExitFailed;
  ctx.out << "OK: " << options.file << " is a valid DLJob (" << job->metadata.name << ", "
          << *job->spec.gpus << (*job->spec.gpus == 1 ? " GPU" : " GPUs") << ")\n";
  return kExitOk;
}

}  // namespace dljob
