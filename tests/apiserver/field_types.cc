// See field_types.h.
#include "tests/apiserver/field_types.h"

#include <map>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

Json Props(Json properties) { return {{"type", "object"}, {"properties", std::move(properties)}}; }
Json StringMap() { return {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}; }
Json MapList(const std::vector<std::string>& keys, Json item = Props(Json::object())) {
  return {{"type", "array"},
          {"items", std::move(item)},
          {"x-kubernetes-list-type", "map"},
          {"x-kubernetes-list-map-keys", keys}};
}
Json ByName() { return MapList({"name"}); }
// Ports: keyed by number and protocol, the protocol defaulting to TCP.
Json Ports(const std::string& number) {
  return MapList({number, "protocol"},
                 Props({{"protocol", {{"type", "string"}, {"default", "TCP"}}}}));
}

Json ObjectMeta() {
  return Props(
      {{"labels", StringMap()},
       {"annotations", StringMap()},
       {"finalizers",
        {{"type", "array"}, {"items", {{"type", "string"}}}, {"x-kubernetes-list-type", "set"}}},
       {"ownerReferences", MapList({"uid"})}});
}

Json Container() {
  return Props({{"ports", Ports("containerPort")},
                {"env", ByName()},
                {"volumeMounts", MapList({"mountPath"})},
                {"resources", Props({{"limits", StringMap()}, {"requests", StringMap()}})}});
}

// The built-in kinds' shapes, by ResourceType::Key().
std::map<std::string, std::shared_ptr<const Json>> BuiltinSchemas() {
  std::map<std::string, Json> schemas;
  schemas["pods"] = Props({{"spec", Props({{"containers", MapList({"name"}, Container())},
                                           {"initContainers", MapList({"name"}, Container())},
                                           {"ephemeralContainers", MapList({"name"}, Container())},
                                           {"volumes", ByName()},
                                           {"imagePullSecrets", ByName()},
                                           {"nodeSelector", StringMap()}})},
                           {"status", Props({{"conditions", MapList({"type"})}})}});
  Json selector = StringMap();
  selector["x-kubernetes-map-type"] = "atomic";
  schemas["services"] =
      Props({{"spec", Props({{"ports", Ports("port")}, {"selector", selector}})}});
  schemas["configmaps"] = Props({{"data", StringMap()}, {"binaryData", StringMap()}});
  schemas["secrets"] = Props({{"data", StringMap()}, {"stringData", StringMap()}});
  schemas["nodes"] = Props({{"status", Props({{"capacity", StringMap()},
                                              {"allocatable", StringMap()},
                                              {"conditions", MapList({"type"})}})}});
  std::map<std::string, std::shared_ptr<const Json>> out;
  for (auto& [key, schema] : schemas) out[key] = std::make_shared<const Json>(std::move(schema));
  return out;
}

const std::shared_ptr<const Json>& ObjectMetaMergeSchema() {
  static const std::shared_ptr<const Json> kSchema = std::make_shared<const Json>(ObjectMeta());
  return kSchema;
}

bool Flag(const Json* schema, const char* key) {
  if (!schema || !schema->is_object()) return false;
  auto it = schema->find(key);
  return it != schema->end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

FieldType::FieldType(std::shared_ptr<const Json> keep, const Json* schema, bool builtin, bool root)
    : keep_(std::move(keep)),
      schema_(schema && schema->is_object() ? schema : nullptr),
      builtin_(builtin),
      root_(root) {
  const Json* keys = Child("x-kubernetes-list-map-keys");
  if (keys && keys->is_array()) {
    for (const Json& k : *keys) {
      if (k.is_string()) keys_.push_back(k.get<std::string>());
    }
  }
}

FieldType FieldType::Root(std::shared_ptr<const Json> schema, bool builtin) {
  const Json* node = schema.get();
  return FieldType(std::move(schema), node, builtin, /*root=*/true);
}

FieldType FieldType::RootOf(const ResourceType& type) {
  if (type.custom) return Root(type.schema, /*builtin=*/false);
  static const std::map<std::string, std::shared_ptr<const Json>> kBuiltin = BuiltinSchemas();
  auto it = kBuiltin.find(type.Key());
  return Root(it == kBuiltin.end() ? nullptr : it->second, /*builtin=*/true);
}

const Json* FieldType::Child(const char* keyword) const {
  if (!schema_) return nullptr;
  auto it = schema_->find(keyword);
  return it == schema_->end() ? nullptr : &*it;
}

bool FieldType::AtomicMap() const {
  const Json* type = Child("x-kubernetes-map-type");
  return type && *type == "atomic";
}

bool FieldType::Declares(const std::string& key) const {
  if (root_ && (key == "apiVersion" || key == "kind" || key == "metadata")) return true;
  const Json* props = Child("properties");
  if (props && props->is_object() && props->contains(key)) return true;
  const Json* additional = Child("additionalProperties");
  if (additional && additional->is_object()) return false;  // a map
  // Unknown: a built-in kind's objects are structs; a custom resource's are deduced maps.
  return builtin_;
}

FieldType FieldType::Field(const std::string& key) const {
  if (root_ && key == "metadata") {
    return FieldType(ObjectMetaMergeSchema(), ObjectMetaMergeSchema().get(), /*builtin=*/true,
                     false);
  }
  const Json* props = Child("properties");
  if (props && props->is_object() && props->contains(key)) {
    return FieldType(keep_, &(*props)[key], builtin_, false);
  }
  const Json* additional = Child("additionalProperties");
  if (additional && additional->is_object()) return FieldType(keep_, additional, builtin_, false);
  // Not described: nothing known below (x-kubernetes-preserve-unknown-fields, or a built-in
  // field the table leaves out).
  return FieldType(keep_, nullptr,
                   builtin_ && !Flag(schema_, "x-kubernetes-preserve-unknown-fields"), false);
}

FieldType::ListKind FieldType::List() const {
  const Json* type = Child("x-kubernetes-list-type");
  if (!type || !type->is_string()) return ListKind::kAtomic;
  if (*type == "set") return ListKind::kSet;
  if (*type == "map" && !keys_.empty()) return ListKind::kMap;
  return ListKind::kAtomic;
}

FieldType FieldType::Item() const {
  const Json* items = Child("items");
  return FieldType(keep_, items, builtin_, false);
}

Json FieldType::KeyDefault(const std::string& key) const {
  const Json* items = Child("items");
  if (!items || !items->is_object()) return nullptr;
  auto props = items->find("properties");
  if (props == items->end() || !props->is_object() || !props->contains(key)) return nullptr;
  return (*props)[key].value("default", Json());
}

}  // namespace dljob::apiserver
