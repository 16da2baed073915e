// See document_check.h.
#include "jobs/document_check.h"

#include <algorithm>

#include "jobs/defaults.h"
#include "jobs/validation.h"

namespace dljob {

bool IsWholeDocumentProblem(const FieldErrors& errors) {
  return std::any_of(errors.begin(), errors.end(),
                     [](const FieldError& e) { return e.path.empty(); });
}

FieldErrors MergeProblems(const FieldErrors& decode_errors, FieldErrors validation,
                          const SourcePositions& positions) {
  FieldErrors errors = decode_errors;
  for (FieldError& e : validation) {
    bool known = std::any_of(decode_errors.begin(), decode_errors.end(),
                             [&](const FieldError& d) { return d.path == e.path; });
    if (!known) errors.push_back(std::move(e));
  }
  LocateErrors(positions, errors);
  return errors;
}

FieldErrors CheckDecodedJob(DecodeResult& decoded) {
  if (IsWholeDocumentProblem(decoded.errors)) return decoded.errors;
  ApplyDefaults(decoded.job);
  return MergeProblems(decoded.errors, Validate(decoded.job), decoded.positions);
}

FieldErrors CheckDecodedQueue(const QueueDecodeResult& decoded) {
  if (IsWholeDocumentProblem(decoded.errors)) return decoded.errors;
  return MergeProblems(decoded.errors, Validate(decoded.queue), decoded.positions);
}

}  // namespace dljob
