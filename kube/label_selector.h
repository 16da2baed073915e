// LabelSelector: a Kubernetes label selector, as the labelSelector query parameter and
// `kubectl -l` spell it — the one parser and matcher of the project (the in-memory FakeApi and
// the test API server filter with it).
//
// Comma-separated requirements, all of which must hold: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
// `k notin (a,b)`, `k` (the label exists) and `!k` (it does not). `!=` and `notin` hold for an
// object without the label, as in Kubernetes. Keys are [A-Za-z0-9._/-]+; values are taken as
// written (spaces around them trimmed). The empty selector matches everything.
//
// Pure values: parse once, match from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace dljob::kube {

class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::vector<std::string> values;  // one for kEquals/kNotEquals; none for kExists/kNotExists

    bool operator==(const Requirement&) const = default;
  };

  // kInvalidArgument quoting the requirement that did not parse (a 400 BadRequest at the REST
  // layer).
  static Result<LabelSelector> Parse(std::string_view text);

  // `labels` is an object's metadata.labels (an object of strings, or null/absent).
  bool Matches(const nlohmann::json& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

// The selector grammar's lexing, shared with the field-selector parser of the test API server:
// `s` without leading and trailing blanks, and the comma-separated terms of a selector (commas
// inside parentheses, as in "env in (a,b)", do not split), each trimmed.
std::string Trim(std::string_view s);
std::vector<std::string> SplitTopLevel(std::string_view text);

}  // namespace dljob::kube
