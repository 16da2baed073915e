// FieldError: one problem with one field of a DLJob, named by its path.
//
// Paths follow Kubernetes conventions: "spec.gpus", "spec.data[1].source", "metadata.name".
// Parsing a YAML file also records where each field was written, so an error can point at the
// line and column a person needs to edit. Plain values; thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace dljob {

struct FieldError {
  std::string path;    // "spec.data[1].source"; "" for a whole-document problem
  std::string reason;  // "unknown scheme \"s4\" (expected nas://, oss://, pvc:, hostPath:)"
  int line = 0;        // 1-based position in the source file; 0 when unknown
  int column = 0;

  // "spec.gpus: must be a positive integer, got -2" (plus " (line 7, column 9)" when known).
  std::string ToString() const;
  bool operator==(const FieldError&) const = default;
};

using FieldErrors = std::vector<FieldError>;

// Joins errors one per line, in order.
std::string JoinFieldErrors(const FieldErrors& errors);

}  // namespace dljob
