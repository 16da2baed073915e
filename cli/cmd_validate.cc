// dljob validate -f FILE: a DLJob, or a DLQueue (the document's kind decides).
#include <memory>
#include <numeric>

#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cli/job_loading.h"
#include "jobs/codec.h"

namespace dljob {
namespace {

int ValidateQueue(const std::string& text, const std::string& file, CliContext& ctx) {
  Result<DLQueue> queue = LoadQueueText(text, file, ctx);
  if (!queue.ok()) return kExitFailed;
  const std::vector<QueueQuota>& quotas = queue->spec.quotas;
  int64_t nominal =
      std::accumulate(quotas.begin(), quotas.end(), int64_t{0},
                      [](int64_t sum, const QueueQuota& q) { return sum + q.nominal.value_or(0); });
  ctx.out << "OK: " << file << " is a valid DLQueue (" << queue->metadata.name << ", " << nominal
          << (nominal == 1 ? " nominal GPU" : " nominal GPUs");
  if (quotas.size() > 1) ctx.out << " in " << quotas.size() << " quotas";
  ctx.out << ")\n";
  return kExitOk;
}

}  // namespace

int RunValidate(const ValidateOptions& options, CliContext& ctx) {
  std::optional<std::string> text = ReadInputFile(options.file, ctx);
  if (!text) return kExitFailed;
  if (DocumentKind(*text) == kQueueKind) return ValidateQueue(*text, options.file, ctx);
  Result<DLJob> job = LoadJobText(*text, options.file, nullptr, ctx);
  if (!job.ok()) return kExitFailed;
  const ObjectMeta& m = job->metadata;
  ctx.out << "OK: " << options.file << " is a valid DLJob ("
          << (m.name.empty() ? "generateName " + m.generate_name : m.name) << ", "
          << *job->spec.gpus << (*job->spec.gpus == 1 ? " GPU" : " GPUs") << ")\n";
  return kExitOk;
}

void AddValidateCommand(CommandRegistry& registry) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd =
      registry.Add("validate", "Check a DLJob or DLQueue file and print every problem",
                   [options](CommandShared& shared) { return RunValidate(*options, shared.ctx); });
  cmd->add_option("-f,--filename", options->file,
                  "DLJob or DLQueue YAML or JSON file ('-' for stdin)")
      ->required();
}

}  // namespace dljob
