// See resource_types.h.
#include "tests/apiserver/resource_types.h"

#include <algorithm>
#include <utility>

#include "base/json_fields.h"

namespace dljob::apiserver {
namespace {

ResourceType Core(std::string plural, std::string singular, std::string kind, bool namespaced,
                  std::vector<std::string> short_names) {
  ResourceType t;
  t.version = "v1";
  t.plural = std::move(plural);
  t.singular = std::move(singular);
  t.kind = std::move(kind);
  t.namespaced = namespaced;
  t.short_names = std::move(short_names);
  return t;
}

std::vector<std::string> Strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& s : *it) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

// The version a CRD stores (or, failing that, serves first).
const Json* ChosenVersion(const Json& versions) {
  const Json* served = nullptr;
  for (const Json& v : versions) {
    if (v.value("storage", false)) return &v;
    if (!served && v.value("served", true)) served = &v;
  }
  return served;
}

}  // namespace

std::vector<ResourceType> BuiltinTypes() {
  std::vector<ResourceType> types;
  ResourceType ns = Core("namespaces", "namespace", "Namespace", false, {"ns"});
  ns.has_status = true;
  ns.create_status = CreateStatus::kNamespace;
  ns.table = TableStyle::kNamespaces;
  types.push_back(ns);

  ResourceType pods = Core("pods", "pod", "Pod", true, {"po"});
  pods.has_status = true;
  pods.create_status = CreateStatus::kPodPending;
  pods.table = TableStyle::kPods;
  pods.categories = {"all"};
  pods.extra_subresources = {"binding", "log"};
  types.push_back(pods);

  ResourceType services = Core("services", "service", "Service", true, {"svc"});
  services.has_status = true;
  services.categories = {"all"};
  types.push_back(services);
  types.push_back(Core("configmaps", "configmap", "ConfigMap", true, {"cm"}));
  types.push_back(Core("secrets", "secret", "Secret", true, {}));
  types.push_back(Core("events", "event", "Event", true, {"ev"}));

  ResourceType nodes = Core("nodes", "node", "Node", false, {"no"});
  nodes.has_status = true;
  nodes.table = TableStyle::kNodes;
  types.push_back(nodes);

  ResourceType leases = Core("leases", "lease", "Lease", true, {});
  leases.group = "coordination.k8s.io";
  types.push_back(leases);

  // policy/v1beta1 only, as the reference cluster (Kubernetes 1.20) serves them: clients that
  // prefer policy/v1 find it missing (404) and fall back, as they must there. Stored and listed;
  // no disruption controller fills their status and no eviction consults them.
  ResourceType pdbs =
      Core("poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, {"pdb"});
  pdbs.group = "policy";
  pdbs.version = "v1beta1";
  pdbs.has_status = true;
  types.push_back(pdbs);

  ResourceType crds = Core("customresourcedefinitions", "customresourcedefinition",
                           "CustomResourceDefinition", false, {"crd", "crds"});
  crds.group = "apiextensions.k8s.io";
  crds.has_status = true;
  crds.categories = {"api-extensions"};
  types.push_back(crds);

  ResourceType webhooks = Core("validatingwebhookconfigurations", "validatingwebhookconfiguration",
                               "ValidatingWebhookConfiguration", false, {});
  webhooks.group = "admissionregistration.k8s.io";
  webhooks.categories = {"api-extensions"};
  types.push_back(webhooks);
  return types;
}

Result<ResourceType> TypeFromCrd(const Json& crd) {
  if (!crd.is_object() || !crd.contains("spec") || !crd["spec"].is_object()) {
    return Status::InvalidArgument("spec: Required value");
  }
  const Json& spec = crd["spec"];
  const Json names = spec.value("names", Json::object());
  ResourceType t;
  t.custom = true;
  t.group = StringAt(spec, "group");
  t.plural = StringAt(names, "plural");
  t.kind = StringAt(names, "kind");
  if (t.group.empty()) return Status::InvalidArgument("spec.group: Required value");
  if (t.plural.empty()) return Status::InvalidArgument("spec.names.plural: Required value");
  if (t.kind.empty()) return Status::InvalidArgument("spec.names.kind: Required value");
  t.singular = StringAt(names, "singular");
  if (t.singular.empty()) {
    t.singular = t.kind;
    std::transform(t.singular.begin(), t.singular.end(), t.singular.begin(), ::tolower);
  }
  t.short_names = Strings(names, "shortNames");
  t.categories = Strings(names, "categories");
  t.namespaced = StringAt(spec, "scope") != "Cluster";

  const Json* version = spec.contains("versions") ? ChosenVersion(spec["versions"]) : nullptr;
  if (!version) return Status::InvalidArgument("spec.versions: Required value");
  t.version = StringAt(*version, "name");
  if (t.version.empty()) return Status::InvalidArgument("spec.versions[].name: Required value");
  const Json sub = version->value("subresources", Json::object());
  t.has_status = sub.is_object() && sub.contains("status");
  t.create_status = t.has_status ? CreateStatus::kDrop : CreateStatus::kKeep;

  auto schema = version->find("schema");
  if (schema != version->end() && schema->is_object() && schema->contains("openAPIV3Schema")) {
    t.schema = std::make_shared<const Json>((*schema)["openAPIV3Schema"]);
  }

  auto columns = version->find("additionalPrinterColumns");
  if (columns != version->end() && columns->is_array()) {
    t.table = TableStyle::kColumns;
    for (const Json& c : *columns) {
      PrinterColumn col;
      col.name = StringAt(c, "name");
      col.type = StringAt(c, "type");
      col.json_path = StringAt(c, "jsonPath");
      col.description = StringAt(c, "description");
      col.priority = c.value("priority", 0);
      t.columns.push_back(std::move(col));
    }
  }
  return t;
}

ResourceRegistry::ResourceRegistry() : types_(BuiltinTypes()) {}

void ResourceRegistry::Add(ResourceType type) {
  MutexLock lock(mu_);
  for (ResourceType& t : types_) {
    if (t.group == type.group && t.version == type.version && t.plural == type.plural) {
      t = std::move(type);
      return;
    }
  }
  types_.push_back(std::move(type));
}

void ResourceRegistry::Remove(const std::string& group, const std::string& plural) {
  MutexLock lock(mu_);
  std::erase_if(types_, [&](const ResourceType& t) {
    return t.custom && t.group == group && t.plural == plural;
  });
}

std::optional<ResourceType> ResourceRegistry::Find(const std::string& group,
                                                   const std::string& version,
                                                   const std::string& plural) const {
  MutexLock lock(mu_);
  for (const ResourceType& t : types_) {
    if (t.group == group && t.version == version && t.plural == plural) return t;
  }
  return std::nullopt;
}

std::optional<ResourceType> ResourceRegistry::FindByKey(const std::string& key) const {
  MutexLock lock(mu_);
  std::optional<ResourceType> by_plural;
  int plural_matches = 0;
  for (const ResourceType& t : types_) {
    if (t.Key() == key) return t;
    if (t.plural == key) {
      by_plural = t;
      ++plural_matches;
    }
  }
  if (plural_matches == 1) return by_plural;
  return std::nullopt;
}

std::vector<ResourceType> ResourceRegistry::All() const {
  MutexLock lock(mu_);
  return types_;
}

}  // namespace dljob::apiserver
