// dljob validate -f FILE
#include <memory>

#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/job_loading.h"

namespace dljob {

int RunValidate(const ValidateOptions& options, CliContext& ctx) {
  Result<DLJob> job = LoadJob(options.file, nullptr, ctx);
  if (!job.ok()) return kExitFailed;
  ctx.out << "OK: " << options.file << " is a valid DLJob (" << job->metadata.name << ", "
          << *job->spec.gpus << (*job->spec.gpus == 1 ? " GPU" : " GPUs") << ")\n";
  return kExitOk;
}

void AddValidateCommand(CommandRegistry& registry) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd =
      registry.Add("validate", "Check a DLJob file and print every problem",
                   [options](CommandShared& shared) { return RunValidate(*options, shared.ctx); });
  cmd->add_option("-f,--filename", options->file, "DLJob YAML or JSON file ('-' for stdin)")
      ->required();
}

}  // namespace dljob
