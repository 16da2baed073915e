// Field sets: which fields of an object one manager owns, in the encoding the real API server
// uses in metadata.managedFields (structured-merge-diff's "FieldsV1").
//
// A path is a list of elements, each spelled as in FieldsV1:
//   "f:<name>"         a field of an object (a struct field or a map key)
//   "k:<JSON object>"  the item of an associative list (x-kubernetes-list-type: map) with these
//                      key fields, sorted by name: k:{"containerPort":80,"protocol":"TCP"}
//   "v:<JSON value>"   the item of a set (x-kubernetes-list-type: set): v:"example.com/a"
// A FieldSet holds member paths. In FieldsV1 each element is a key of nested JSON objects: a
// member with nothing below it is {}, a member with members below it has ".": {} among its
// children, and a key without "." is only the way down to members.
//
// Conflicts name a path as the real server prints it: .spec.containers[name="main"].image,
// .metadata.finalizers[="a"].
//
// Values; pure functions; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dljob::apiserver {

using FieldPath = std::vector<std::string>;

std::string FieldElement(const std::string& name);         // "f:name"
std::string KeyElement(const nlohmann::json& key_fields);  // "k:{...}" (an object)
std::string ValueElement(const nlohmann::json& value);     // "v:<json>"
bool IsFieldElement(const std::string& element);
// ".spec.containers[name=\"main\"].image"
std::string PathString(const FieldPath& path);

class FieldSet {
 public:
  FieldSet() = default;
  FieldSet(std::initializer_list<FieldPath> members) : members_(members) {}

  void Insert(FieldPath path) { members_.insert(std::move(path)); }
  bool Has(const FieldPath& path) const { return members_.count(path) > 0; }
  bool Empty() const { return members_.empty(); }
  // Whether some member lies strictly below `prefix`.
  bool HasBelow(const FieldPath& prefix) const;
  const std::set<FieldPath>& members() const { return members_; }

  FieldSet Union(const FieldSet& other) const;
  FieldSet Difference(const FieldSet& other) const;
  FieldSet Intersection(const FieldSet& other) const;
  // The members `keep` says yes to.
  FieldSet Filter(const std::function<bool(const FieldPath&)>& keep) const;
  // Adds every proper prefix of a member that ends in a field ("f:") element, so that owning
  // .spec.a.b also protects .spec and .spec.a from being pruned (structured-merge-diff's
  // EnsureNamedFieldsAreMembers, with every field taken as named; see field_manager.h).
  FieldSet WithFieldPrefixes() const;

  nlohmann::json ToFieldsV1() const;
  // nullopt when `fields` is not a FieldsV1 tree (a non-object anywhere).
  static std::optional<FieldSet> FromFieldsV1(const nlohmann::json& fields);

  bool operator==(const FieldSet& other) const { return members_ == other.members_; }

 private:
  std::set<FieldPath> members_;
};

}  // namespace dljob::apiserver
