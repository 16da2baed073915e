// Internal to jobs/: what every kind's validation (validation.cc for DLJob, dlqueue_validation.cc
// for DLQueue) is written with — field paths from the field tables' JSON names, and a Checker
// that collects `path: reason` errors.
//
// Pure; thread-compatible (a Checker appends to the errors it was given).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "jobs/field_error.h"
#include "jobs/field_path.h"
#include "jobs/field_table.h"

namespace dljob {
struct Affinity;
}  // namespace dljob

namespace dljob::validation_internal {

// The path of `member` of the struct at `parent`: At("spec", &DLJobSpec::gpus) == "spec.gpus".
template <typename S, typename M>
std::string At(const std::string& parent, M S::*member) {
  return JoinField(parent, FieldName(member));
}

inline bool IsOneOf(std::string_view value, std::span<const std::string_view> allowed) {
  for (std::string_view a : allowed) {
    if (value == a) return true;
  }
  return false;
}

class Checker {
 public:
  explicit Checker(FieldErrors& errors) : errors_(errors) {}
  // Records `path: reason` unless reason is empty (the rule passed).
  void Check(const std::string& path, const std::string& reason) {
    if (!reason.empty()) errors_.push_back(FieldError{path, reason});
  }
  // For an optional integer that must lie in [min, max] when set.
  void Range(const std::string& path, const std::optional<int64_t>& v, int64_t min, int64_t max,
             const std::string& what) {
    if (v && (*v < min || *v > max)) Check(path, "must be " + what + ", got " + std::to_string(*v));
  }
  // For an optional string that must be one of `allowed` when set.
  void OneOf(const std::string& path, const std::optional<std::string>& v,
             std::span<const std::string_view> allowed) {
    if (v && !IsOneOf(*v, allowed)) {
      Check(path, "must be " + JoinOr(allowed) + ", got " + Quote(*v));
    }
  }

 private:
  FieldErrors& errors_;
};

// spec.scheduling.affinity, at `path` (validation_affinity.cc).
void CheckAffinity(Checker& c, const std::string& path, const Affinity& affinity);

// Labels and annotations: every key a label key, and for labels every value a label value.
void CheckStringMap(Checker& c, const std::string& path,
                    const std::map<std::string, std::string>& m, bool values_are_labels);

}  // namespace dljob::validation_internal
