#include "cli/job_loading.h"

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/dlqueue_codec.h"
#include "jobs/document_check.h"
#include "jobs/generated_name.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

void PrintProblems(CliContext& ctx, const std::string& what, const char* kind,
                   const FieldErrors& errors, const std::string& hint) {
  ctx.err << "error: " << what << " is not a valid " << kind << " (" << errors.size()
          << (errors.size() == 1 ? " problem" : " problems") << "):\n";
  for (const FieldError& e : errors) ctx.err << "  " << e.ToString() << "\n";
  ctx.err << "hint: " << hint << "\n";
  ctx.err.flush();
}

std::string Describe(const std::string& file) { return file == "-" ? "stdin" : file; }

}  // namespace

std::optional<std::string> ReadInputFile(const std::string& file, CliContext& ctx) {
  Result<std::string> text = ReadDocumentFile(file);
  if (!text.ok()) {
    PrintError(ctx, text.status().message(),
               "check the path; examples live in examples/, e.g. -f examples/mnist-job.yaml");
    return std::nullopt;
  }
  return std::move(text).value();
}

Result<DLJob> LoadJob(const std::string& file, const SubmitFlags* flags, CliContext& ctx,
                      const std::string& default_namespace) {
  if (file.empty()) return LoadJobText(std::nullopt, file, flags, ctx, default_namespace);
  std::optional<std::string> text = ReadInputFile(file, ctx);
  if (!text) return Status::InvalidArgument("unreadable file");
  return LoadJobText(*text, file, flags, ctx, default_namespace);
}

Result<DLJob> LoadJobText(const std::optional<std::string>& text, const std::string& file,
                          const SubmitFlags* flags, CliContext& ctx,
                          const std::string& default_namespace) {
  DLJob job;
  FieldErrors decode_errors;  // field-level problems; validation still runs to report the rest
  SourcePositions positions;  // where the file wrote each field, to point at validation errors
  std::string what = text ? Describe(file) : "the job built from flags";
  if (text) {
    DecodeResult decoded = DecodeAny(*text);
    if (IsWholeDocumentProblem(decoded.errors)) {
      // Not a DLJob at all (syntax error, not a mapping): nothing to validate.
      PrintProblems(ctx, what, kKind, decoded.errors,
                    "fix the document (see examples/mnist-job.yaml for a complete job)");
      return Status::InvalidArgument("invalid job");
    }
    decode_errors = std::move(decoded.errors);
    positions = std::move(decoded.positions);
    job = std::move(decoded.job);
  }
  if (flags) {
    if (Status s = ApplySubmitFlags(*flags, job); !s.ok()) {
      PrintError(ctx, s.message(), "see: dljob submit --help");
      return s;
    }
  }
  if (job.metadata.namespace_.empty()) job.metadata.namespace_ = default_namespace;
  ApplyDefaults(job);
  // A job to submit that no one named: named as Kubernetes names it, from a prefix saying what
  // it runs (the backend, or the API server, adds the random part).
  if (flags && job.metadata.name.empty() && job.metadata.generate_name.empty()) {
    job.metadata.generate_name = GenerateNamePrefix(job);
  }
  FieldErrors errors = MergeProblems(decode_errors, Validate(job), positions);
  if (!errors.empty()) {
    PrintProblems(ctx, what, kKind, errors,
                  text ? "fix the fields above and run: dljob validate -f " + file
                       : "fix the flags above; see: dljob submit --help");
    return Status::InvalidArgument("invalid job");
  }
  return job;
}

Result<DLQueue> LoadQueueText(const std::string& text, const std::string& file, CliContext& ctx) {
  QueueDecodeResult decoded = DecodeQueueAny(text);
  if (IsWholeDocumentProblem(decoded.errors)) {
    PrintProblems(ctx, Describe(file), kQueueKind, decoded.errors,
                  "fix the document (see examples/queue-default.yaml for a complete queue)");
    return Status::InvalidArgument("invalid queue");
  }
  FieldErrors errors = CheckDecodedQueue(decoded);
  if (!errors.empty()) {
    PrintProblems(ctx, Describe(file), kQueueKind, errors,
                  "fix the fields above and run: dljob validate -f " + file);
    return Status::InvalidArgument("invalid queue");
  }
  return std::move(decoded.queue);
}

}  // namespace dljob
