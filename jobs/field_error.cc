#include "jobs/field_error.h"

namespace dljob {

std::string FieldError::ToString() const {
  std::string out = path.empty() ? reason : path + ": " + reason;
  if (line > 0) {
    out += " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")";
  }
  return out;
}

std::string JoinFieldErrors(const FieldErrors& errors) {
  std::string out;
  for (const FieldError& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.ToString();
  }
  return out;
}

}  // namespace dljob
