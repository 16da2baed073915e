// The resource types the test API server serves, and the registry that holds them.
//
// A ResourceType is what the server knows about one REST resource: its names (plural, singular,
// kind, short names), whether it is namespaced, whether it has a status subresource, and how it
// prints as a Table. The registry starts with the built-in types dljob uses (namespaces, pods,
// services, configmaps, secrets, events, nodes, leases, customresourcedefinitions,
// validatingwebhookconfigurations) and grows as
// CustomResourceDefinitions are registered (TypeFromCrd).
//
// Thread-safety: ResourceType is a value. ResourceRegistry is safe to use from many threads;
// lookups return copies, so a type stays valid while a CRD is added or removed concurrently.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "base/status.h"

namespace dljob::apiserver {

using Json = nlohmann::json;

// How a Table shows objects of a type (table.h).
enum class TableStyle { kDefault, kPods, kNodes, kNamespaces, kColumns };

// A CRD additionalPrinterColumn: shown in Tables; jsonPath is a dotted path (".status.phase").
struct PrinterColumn {
  std::string name;
  std::string type;  // string, integer, number, boolean, date
  std::string json_path;
  std::string description;
  int priority = 0;
};

// What a create does with the .status the client sent.
enum class CreateStatus {
  kKeep,        // nodes, leases, CRDs: kept as sent
  kDrop,        // custom resources with a status subresource: cleared
  kPodPending,  // pods: replaced by {phase: Pending}
  kNamespace,   // namespaces: {phase: Active}
};

struct ResourceType {
  std::string group;  // "" for core
  std::string version;
  std::string plural;
  std::string singular;
  std::string kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> extra_subresources;  // besides status: "binding", "log"
  bool has_status = false;                      // a status subresource
  bool custom = false;                          // defined by a CRD
  CreateStatus create_status = CreateStatus::kKeep;
  TableStyle table = TableStyle::kDefault;
  std::vector<PrinterColumn> columns;  // for TableStyle::kColumns
  // A CRD's spec.versions[].schema.openAPIV3Schema (null for built-in types; shared, immutable).
  std::shared_ptr<const Json> schema;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  std::string ListKind() const { return kind + "List"; }
  // "pods", "dljobs.dljob.io": the name messages use and the store's key.
  std::string Key() const { return group.empty() ? plural : plural + "." + group; }
};

// The ResourceType a CustomResourceDefinition (apiextensions.k8s.io/v1 JSON) defines, for its
// storage version (or the first served one). Errors name the missing field.
Result<ResourceType> TypeFromCrd(const Json& crd);

// The built-in types, in discovery order.
std::vector<ResourceType> BuiltinTypes();

class ResourceRegistry {
 public:
  ResourceRegistry();  // holds BuiltinTypes()

  // Adds or replaces the type with the same group, version and plural.
  void Add(ResourceType type);
  // Removes every version of group/plural (a deleted CRD).
  void Remove(const std::string& group, const std::string& plural);

  std::optional<ResourceType> Find(const std::string& group, const std::string& version,
                                   const std::string& plural) const;
  // By Key() ("pods", "dljobs.dljob.io"), or by plural alone when it is unambiguous.
  std::optional<ResourceType> FindByKey(const std::string& key) const;
  std::vector<ResourceType> All() const;

 private:
  mutable Mutex mu_;
  std::vector<ResourceType> types_ GUARDED_BY(mu_);
};

}  // namespace dljob::apiserver
