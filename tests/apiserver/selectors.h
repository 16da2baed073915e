// Field selectors, as the fieldSelector query parameter spells them (label selectors are
// kube::LabelSelector, kube/label_selector.h).
//
// Comma-separated requirements, all of which must hold: `path=v`, `path==v`, `path!=v` over a
// dotted path into the object (metadata.name, metadata.namespace, spec.nodeName, status.phase,
// …); a missing field reads as "". The empty selector matches everything.
//
// Pure values: parse once, match from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "kube/label_selector.h"

namespace dljob::apiserver {

// Label selectors are kube's, the one parser and matcher of the project (kube/label_selector.h);
// the store, watch cursors and REST layer name it here as the field selector's sibling.
using kube::LabelSelector;

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
