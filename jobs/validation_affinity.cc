// spec.scheduling.affinity's rules (validation.h), as the Kubernetes API server checks a pod's
// required node affinity: at least one nodeSelectorTerm; per requirement a qualified-name key, a
// known operator, and values as the operator needs them (In/NotIn one or more, Exists/DoesNotExist
// none, Gt/Lt exactly one). Gt/Lt's value must also be an integer, which the API server leaves to
// the scheduler (a value that is not one matches no node); here it is an error naming the field.
#include <charconv>
#include <cstdint>

#include "jobs/dljob_fields.h"
#include "jobs/field_checker.h"
#include "jobs/field_path.h"
#include "jobs/validation.h"

namespace dljob::validation_internal {
namespace {

// What the scheduler reads as an integer (scheduler/feasibility.cc): an optional '-'
// and decimal digits that fit in 64 bits.
bool IsInteger(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

std::string Values(size_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

void CheckRequirement(Checker& c, const std::string& path, const NodeSelectorRequirement& r) {
  using R = NodeSelectorRequirement;
  std::string key = At(path, &R::key), op = At(path, &R::operator_), values = At(path, &R::values);
  if (r.key.empty()) {
    c.Check(key, "required: the node label to match, e.g. nvidia.com/gpu.product");
  } else {
    c.Check(key, CheckLabelKey(r.key));
  }
  const size_t n = r.values.size();
  if (r.operator_ == "In" || r.operator_ == "NotIn") {
    if (n == 0) c.Check(values, "must have at least one value when operator is " + r.operator_);
  } else if (r.operator_ == "Exists" || r.operator_ == "DoesNotExist") {
    if (n != 0) {
      c.Check(values, "must be empty when operator is " + r.operator_ + ", got " + Values(n));
    }
  } else if (r.operator_ == "Gt" || r.operator_ == "Lt") {
    if (n != 1) {
      c.Check(values,
              "must be exactly one integer when operator is " + r.operator_ + ", got " + Values(n));
    } else if (!IsInteger(r.values[0])) {
      c.Check(JoinIndex(values, 0), "must be an integer when operator is " + r.operator_ +
                                        " (node labels compare as numbers), got " +
                                        Quote(r.values[0]));
    }
  } else if (r.operator_.empty()) {
    c.Check(op, "required: one of " + JoinOr(kNodeSelectorOperators));
  } else {
    c.Check(op, "must be " + JoinOr(kNodeSelectorOperators) + ", got " + Quote(r.operator_));
  }
}

}  // namespace

void CheckAffinity(Checker& c, const std::string& path, const Affinity& affinity) {
  if (!affinity.node_affinity) return;
  const std::string node = At(path, &Affinity::node_affinity);
  const std::optional<NodeSelector>& required =
      affinity.node_affinity->required_during_scheduling_ignored_during_execution;
  if (!required) return;
  const std::string terms =
      At(At(node, &NodeAffinity::required_during_scheduling_ignored_during_execution),
         &NodeSelector::node_selector_terms);
  if (required->node_selector_terms.empty()) {
    c.Check(terms, "must have at least one node selector term");
    return;
  }
  for (size_t t = 0; t < required->node_selector_terms.size(); ++t) {
    const std::string list = At(JoinIndex(terms, t), &NodeSelectorTerm::match_expressions);
    const std::vector<NodeSelectorRequirement>& reqs =
        required->node_selector_terms[t].match_expressions;
    for (size_t i = 0; i < reqs.size(); ++i) CheckRequirement(c, JoinIndex(list, i), reqs[i]);
  }
}

}  // namespace dljob::validation_internal
