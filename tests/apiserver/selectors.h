// Label and field selectors, as the labelSelector and fieldSelector query parameters spell them.
//
// Label selectors: comma-separated requirements `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
// `k notin (a,b)`, `k` (exists) and `!k` (does not exist); all must hold. Field selectors:
// `path=v`, `path==v`, `path!=v` over a dotted path into the object (metadata.name,
// metadata.namespace, spec.nodeName, status.phase, …); a missing field reads as "". The empty
// selector matches everything.
//
// Pure values: parse once, match from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace dljob::apiserver {

class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::vector<std::string> values;
  };

  // Errors (400 BadRequest at the REST layer) quote the requirement that did not parse.
  static Result<LabelSelector> Parse(std::string_view text);

  // `labels` is metadata.labels (an object, or null/absent).
  bool Matches(const nlohmann::json& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

class FieldSelector {
 public:
  struct Requirement {
    std::string path;  // "spec.nodeName"
    bool negate = false;
    std::string value;
  };

  static Result<FieldSelector> Parse(std::string_view text);

  bool Matches(const nlohmann::json& object) const;
  bool empty() const { return requirements_.empty(); }

 private:
  std::vector<Requirement> requirements_;
};

// The value at a dotted path as text ("" when absent; numbers and booleans in JSON spelling).
std::string FieldText(const nlohmann::json& object, std::string_view dotted_path);

}  // namespace dljob::apiserver
