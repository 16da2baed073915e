// See openapi.h. One model of the paths (PathsOf) and one schema builder (ObjectSchema), rendered
// as OpenAPI v3 (RenderV3) and Swagger 2.0 (RenderV2).
#include "tests/apiserver/openapi.h"

#include <cstdio>
#include <set>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

const char kObjectMetaRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const char kPatchRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const char kVersion[] = "v1.32.0-dljob-test";

enum class Dialect { kV3, kV2 };

std::string GvPath(const ResourceType& t) {
  return t.group.empty() ? "api/" + t.version : "apis/" + t.group + "/" + t.version;
}

// "io.k8s.api.core.v1.Pod"; a custom resource's is its group reversed: "io.dljob.v1alpha1.DLJob".
std::string SchemaName(const ResourceType& t) {
  if (!t.custom) {
    std::string group = t.group.empty() ? "core" : t.group.substr(0, t.group.find('.'));
    if (t.group == "apiextensions.k8s.io") {
      return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions." + t.version + "." + t.kind;
    }
    return "io.k8s.api." + group + "." + t.version + "." + t.kind;
  }
  std::string reversed;
  for (size_t end = t.group.size(); end != std::string::npos;) {
    size_t dot = t.group.rfind('.', end == 0 ? 0 : end - 1);
    size_t start = dot == std::string::npos ? 0 : dot + 1;
    if (!reversed.empty()) reversed += ".";
    reversed += t.group.substr(start, end - start);
    if (dot == std::string::npos) break;
    end = dot;
  }
  return reversed + "." + t.version + "." + t.kind;
}

Json Ref(Dialect d, const std::string& name) {
  return {{"$ref", (d == Dialect::kV3 ? "#/components/schemas/" : "#/definitions/") + name}};
}

Json Gvk(const ResourceType& t) {
  return {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
}

// ---- The model of the paths, shared by both renderings. ----

enum class Params { kNone, kWrite, kPatch };

struct OperationSpec {
  const char* method;  // "get", "put", "post", "patch", "delete"
  std::string action;  // x-kubernetes-action
  std::string id;
  Params params;
  std::vector<std::string> body_types;  // request media types; empty: no body
};

struct PathSpec {
  std::string path;
  std::vector<std::string> path_params;  // "namespace", "name"
  std::vector<OperationSpec> operations;
};

std::string OperationSuffix(const ResourceType& t, bool namespaced) {
  std::string g = t.group.empty() ? "Core" : t.group.substr(0, t.group.find('.'));
  g[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(g[0])));
  std::string v = t.version;
  v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
  return g + v + (namespaced ? "Namespaced" : "") + t.kind;
}

std::vector<PathSpec> PathsOf(const ResourceType& t) {
  std::string base = "/" + GvPath(t) + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.plural;
  std::string suffix = OperationSuffix(t, t.namespaced);
  std::vector<std::string> bodies = {"application/json", "application/yaml",
                                     "application/vnd.kubernetes.protobuf"};
  std::vector<std::string> patches = {"application/json-patch+json",
                                      "application/merge-patch+json"};
  if (!t.custom) patches.push_back("application/strategic-merge-patch+json");
  patches.push_back("application/apply-patch+yaml");
  std::vector<std::string> ns;
  if (t.namespaced) ns.push_back("namespace");
  std::vector<std::string> item = ns;
  item.push_back("name");

  std::vector<PathSpec> out;
  out.push_back({base,
                 ns,
                 {{"get", "list", "list" + suffix, Params::kNone, {}},
                  {"post", "post", "create" + suffix, Params::kWrite, bodies}}});
  out.push_back({base + "/{name}",
                 item,
                 {{"get", "get", "read" + suffix, Params::kNone, {}},
                  {"put", "put", "replace" + suffix, Params::kWrite, bodies},
                  {"patch", "patch", "patch" + suffix, Params::kPatch, patches},
                  {"delete", "delete", "delete" + suffix, Params::kNone, {}}}});
  if (t.has_status) {
    out.push_back({base + "/{name}/status",
                   item,
                   {{"get", "get", "read" + suffix + "Status", Params::kNone, {}},
                    {"put", "put", "replace" + suffix + "Status", Params::kWrite, bodies},
                    {"patch", "patch", "patch" + suffix + "Status", Params::kPatch, patches}}});
  }
  if (t.namespaced) {
    out.push_back({"/" + GvPath(t) + "/" + t.plural,
                   {},
                   {{"get",
                     "list",
                     "list" + OperationSuffix(t, false) + "ForAllNamespaces",
                     Params::kNone,
                     {}}}});
  }
  return out;
}

// The query parameters of an operation: {name, description}.
std::vector<std::pair<std::string, std::string>> OperationQueryParams(Params params) {
  std::vector<std::pair<std::string, std::string>> out;
  if (params == Params::kNone) return out;
  out.push_back({"dryRun", "When present, indicates that modifications should not be persisted."});
  out.push_back({"fieldManager", "The name of the actor or entity making these changes."});
  out.push_back({"fieldValidation",
                 "How the server handles unknown fields in the request: Ignore, Warn (the "
                 "default) or Strict."});
  if (params == Params::kPatch) {
    out.push_back({"force",
                   "Force is going to \"force\" Apply requests: the applier takes the fields "
                   "other managers own. Only for apply patches."});
  }
  return out;
}

// ---- Schemas, shared by both renderings. ----

Json ObjectSchema(const ResourceType& t, Dialect d) {
  if (!t.custom || !t.schema) {
    return {{"type", "object"},
            {"description", t.kind + ": the test API server publishes no schema for this kind (any "
                                     "fields; see docs/development/test-apiserver.md)."},
            {"x-kubernetes-preserve-unknown-fields", true}};
  }
  Json s = d == Dialect::kV3 ? *t.schema : OpenApiV2Schema(*t.schema);
  if (!s.contains("properties") || !s["properties"].is_object()) s["properties"] = Json::object();
  const char* description = "Standard object's metadata.";
  // v2 has no siblings of $ref; v3 wraps the reference in allOf to keep the description.
  s["properties"]["metadata"] =
      d == Dialect::kV2
          ? Json{{"description", description}, {"$ref", Ref(d, kObjectMetaRef)["$ref"]}}
          : Json{{"description", description}, {"allOf", {Ref(d, kObjectMetaRef)}}};
  s["x-kubernetes-group-version-kind"] = Json::array({Gvk(t)});
  return s;
}

Json ObjectMetaSchema() {
  Json string = {{"type", "string"}};
  Json string_map = {{"type", "object"}, {"additionalProperties", string}};
  Json any_object = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  return {{"type", "object"},
          {"description",
           "ObjectMeta is metadata that all persisted resources must have (the fields the test "
           "API server keeps; others are pruned)."},
          {"properties",
           {{"name", string},
            {"generateName", string},
            {"namespace", string},
            {"uid", string},
            {"resourceVersion", string},
            {"generation", {{"type", "integer"}, {"format", "int64"}}},
            {"creationTimestamp", {{"type", "string"}, {"format", "date-time"}}},
            {"deletionTimestamp", {{"type", "string"}, {"format", "date-time"}}},
            {"labels", string_map},
            {"annotations", string_map},
            {"finalizers", {{"type", "array"}, {"items", string}}},
            {"ownerReferences", {{"type", "array"}, {"items", any_object}}},
            {"managedFields", {{"type", "array"}, {"items", any_object}}}}}};
}

// The schemas every document carries besides the kinds'.
Json SharedSchemas() {
  return {{kObjectMetaRef, ObjectMetaSchema()},
          {kPatchRef,
           {{"type", "object"},
            {"description",
             "Patch is provided to give a concrete name and type to the Kubernetes PATCH "
             "request body."}}}};
}

// ---- The two renderings. ----

Json OperationBase(const ResourceType& t, const OperationSpec& op) {
  return {{"operationId", op.id},
          {"x-kubernetes-action", op.action},
          {"x-kubernetes-group-version-kind", Gvk(t)}};
}

Json RenderV3(const ResourceType& t, const OperationSpec& op) {
  Json out = OperationBase(t, op);
  Json params = Json::array();
  for (const auto& [name, description] : OperationQueryParams(op.params)) {
    params.push_back({{"name", name},
                      {"in", "query"},
                      {"description", description},
                      {"schema", {{"type", "string"}, {"uniqueItems", true}}}});
  }
  out["parameters"] = params;
  Json response = {{"schema", Ref(Dialect::kV3, SchemaName(t))}};
  out["responses"] = {
      {"200", {{"description", "OK"}, {"content", {{"application/json", response}}}}}};
  if (!op.body_types.empty()) {
    Json content = Json::object();
    std::string body = op.params == Params::kPatch ? kPatchRef : SchemaName(t);
    for (const std::string& media : op.body_types) {
      content[media] = {{"schema", Ref(Dialect::kV3, body)}};
    }
    out["requestBody"] = {{"content", content}, {"required", true}};
  }
  return out;
}

Json RenderV2(const ResourceType& t, const OperationSpec& op) {
  Json out = OperationBase(t, op);
  Json params = Json::array();
  if (!op.body_types.empty()) {
    std::string body = op.params == Params::kPatch ? kPatchRef : SchemaName(t);
    params.push_back({{"name", "body"},
                      {"in", "body"},
                      {"required", true},
                      {"schema", Ref(Dialect::kV2, body)}});
    out["consumes"] = op.body_types;
  }
  for (const auto& [name, description] : OperationQueryParams(op.params)) {
    params.push_back({{"name", name},
                      {"in", "query"},
                      {"description", description},
                      {"type", "string"},
                      {"uniqueItems", true}});
  }
  out["parameters"] = params;
  out["produces"] = {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"};
  out["schemes"] = {"https"};
  out["responses"] = {
      {"200", {{"description", "OK"}, {"schema", Ref(Dialect::kV2, SchemaName(t))}}}};
  return out;
}

Json PathParams(const PathSpec& p, Dialect d) {
  Json out = Json::array();
  for (const std::string& name : p.path_params) {
    Json param = {{"name", name}, {"in", "path"}, {"required", true}};
    if (d == Dialect::kV3) {
      param["schema"] = {{"type", "string"}};
    } else {
      param["type"] = "string";
      param["uniqueItems"] = true;
    }
    out.push_back(std::move(param));
  }
  return out;
}

void AddPaths(const ResourceType& t, Dialect d, Json& paths) {
  for (const PathSpec& p : PathsOf(t)) {
    Json item = Json::object();
    if (!p.path_params.empty() || d == Dialect::kV3) item["parameters"] = PathParams(p, d);
    for (const OperationSpec& op : p.operations) {
      item[op.method] = d == Dialect::kV3 ? RenderV3(t, op) : RenderV2(t, op);
    }
    paths[p.path] = std::move(item);
  }
}

std::string Hash(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(h));
  return buf;
}

bool Flag(const Json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

Json OpenApiV2Schema(const Json& in) {
  if (!in.is_object()) return in;
  Json s = in;
  for (const char* junctor : {"allOf", "anyOf", "oneOf", "not"}) s.erase(junctor);
  if (Flag(s, "nullable")) {
    // kubectl cannot validate untyped values that have items or properties.
    s.erase("type");
    s.erase("items");
    s.erase("properties");
  }
  s.erase("nullable");
  if (Flag(s, "x-kubernetes-preserve-unknown-fields")) {
    s.erase("items");
    s.erase("properties");
  }
  if (!s.contains("items") && s.value("type", "") == "array") s.erase("type");
  if (s.contains("properties") && s["properties"].is_object()) {
    Json required = Json::array();
    for (const Json& r : s.value("required", Json::array())) {
      if (!r.is_string() || !s["properties"].contains(r.get<std::string>()) ||
          !Flag(s["properties"][r.get<std::string>()], "nullable")) {
        required.push_back(r);
      }
    }
    if (s.contains("required")) s["required"] = required;
    for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) {
      it.value() = OpenApiV2Schema(it.value());
    }
  }
  if (s.contains("additionalProperties") && s["additionalProperties"].is_object()) {
    if (Flag(s["additionalProperties"], "nullable")) s.erase("required");
    s["additionalProperties"] = OpenApiV2Schema(s["additionalProperties"]);
  }
  if (s.contains("items")) {
    if (s["items"].is_array()) {
      for (Json& item : s["items"]) item = OpenApiV2Schema(item);
    } else {
      s["items"] = OpenApiV2Schema(s["items"]);
    }
  }
  if (s.contains("required") && s["required"].empty()) s.erase("required");
  return s;
}

std::optional<Json> OpenApiV3Document(const std::vector<ResourceType>& types,
                                      const std::string& gv_path) {
  Json paths = Json::object();
  Json schemas = SharedSchemas();
  bool any = false;
  for (const ResourceType& t : types) {
    if (GvPath(t) != gv_path) continue;
    any = true;
    AddPaths(t, Dialect::kV3, paths);
    schemas[SchemaName(t)] = ObjectSchema(t, Dialect::kV3);
  }
  if (!any) return std::nullopt;
  return Json{{"openapi", "3.0.0"},
              {"info", {{"title", "Kubernetes"}, {"version", kVersion}}},
              {"paths", paths},
              {"components", {{"schemas", schemas}}}};
}

Json OpenApiV3Index(const std::vector<ResourceType>& types) {
  Json paths = Json::object();
  std::set<std::string> seen;
  for (const ResourceType& t : types) {
    std::string gv = GvPath(t);
    if (!seen.insert(gv).second) continue;
    std::optional<Json> doc = OpenApiV3Document(types, gv);
    paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=" + Hash(doc->dump())}};
  }
  return {{"paths", paths}};
}

Json OpenApiV2Document(const std::vector<ResourceType>& types) {
  Json paths = Json::object();
  Json definitions = SharedSchemas();
  for (const ResourceType& t : types) {
    AddPaths(t, Dialect::kV2, paths);
    definitions[SchemaName(t)] = ObjectSchema(t, Dialect::kV2);
  }
  return {{"swagger", "2.0"},
          {"info", {{"title", "Kubernetes"}, {"version", kVersion}}},
          {"paths", paths},
          {"definitions", definitions}};
}

}  // namespace dljob::apiserver
