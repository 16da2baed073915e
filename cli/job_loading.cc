#include "cli/job_loading.h"

#include <algorithm>

#include "jobs/codec.h"
#include "jobs/defaults.h"
#include "jobs/validation.h"

namespace dljob {
namespace {

void PrintProblems(CliContext& ctx, const std::string& what, const FieldErrors& errors,
                   const std::string& hint) {
  ctx.err << "error: " << what << " is not a valid DLJob (" << errors.size()
          << (errors.size() == 1 ? " problem" : " problems") << "):\n";
  for (const FieldError& e : errors) ctx.err << "  " << e.ToString() << "\n";
  ctx.err << "hint: " << hint << "\n";
  ctx.err.flush();
}

}  // namespace

Result<DLJob> LoadJob(const std::string& file, const SubmitFlags* flags, CliContext& ctx,
                      const std::string& default_namespace) {
  DLJob job;
  FieldErrors decode_errors;  // field-level problems; validation still runs to report the rest
  SourcePositions positions;  // where the file wrote each field, to point at validation errors
  std::string what = file.empty() ? "the job built from flags" : file == "-" ? "stdin" : file;
  if (!file.empty()) {
    DecodeResult decoded = ReadJobFile(file);
    if (decoded.errors.size() == 1 && decoded.errors[0].path.empty() &&
        decoded.errors[0].line == 0) {
      PrintError(ctx, decoded.errors[0].reason,
                 "check the path; examples live in examples/, e.g. -f examples/mnist-job.yaml");
      return Status::InvalidArgument("unreadable file");
    }
    bool whole_document = std::any_of(decoded.errors.begin(), decoded.errors.end(),
                                      [](const FieldError& e) { return e.path.empty(); });
    if (whole_document) {  // not a DLJob at all (syntax error, not a mapping): nothing to validate
      PrintProblems(ctx, what, decoded.errors,
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
    if (file.empty() && job.metadata.name.empty()) {
      PrintError(ctx, "--name is required when no -f FILE is given",
                 "name the job, e.g. dljob submit --local --name mnist --gpus 2 ...");
      return Status::InvalidArgument("no name");
    }
  }
  if (job.metadata.namespace_.empty()) job.metadata.namespace_ = default_namespace;
  ApplyDefaults(job);
  FieldErrors errors = decode_errors;
  for (FieldError& e : Validate(job)) {
    // A field that failed to decode is also "missing" to validation: report it once.
    bool known = std::any_of(decode_errors.begin(), decode_errors.end(),
                             [&](const FieldError& d) { return d.path == e.path; });
    if (!known) errors.push_back(std::move(e));
  }
  LocateErrors(positions, errors);
  if (!errors.empty()) {
    PrintProblems(ctx, what, errors,
                  file.empty() ? "fix the flags above; see: dljob submit --help"
                               : "fix the fields above and run: dljob validate -f " + file);
    return Status::InvalidArgument("invalid job");
  }
  return job;
}

}  // namespace dljob
