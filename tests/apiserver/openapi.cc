// See openapi.h.
#include "tests/apiserver/openapi.h"

#include <cstdio>
#include <set>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

const char kObjectMetaRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const char kPatchRef[] = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

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

Json Ref(const std::string& name) { return {{"$ref", "#/components/schemas/" + name}}; }

Json Gvk(const ResourceType& t) {
  return {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
}

Json QueryParam(const char* name, const char* description) {
  return {{"name", name},
          {"in", "query"},
          {"description", description},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

Json WriteParams() {
  return Json::array(
      {QueryParam("dryRun", "When present, indicates that modifications should not be persisted."),
       QueryParam("fieldManager", "The name of the actor or entity making these changes."),
       QueryParam("fieldValidation",
                  "How the server handles unknown fields in the request: Ignore, Warn (the "
                  "default) or Strict.")});
}

Json Operation(const ResourceType& t, const std::string& action, const std::string& id, bool write,
               const Json& body_types) {
  Json op = {{"operationId", id},
             {"x-kubernetes-action", action},
             {"x-kubernetes-group-version-kind", Gvk(t)},
             {"parameters", write ? WriteParams() : Json::array()},
             {"responses",
              {{"200",
                {{"description", "OK"},
                 {"content", {{"application/json", {{"schema", Ref(SchemaName(t))}}}}}}}}}};
  if (!body_types.empty()) {
    Json content = Json::object();
    for (const Json& media : body_types) {
      content[media.get<std::string>()] = {
          {"schema", Ref(action == "patch" ? kPatchRef : SchemaName(t))}};
    }
    op["requestBody"] = {{"content", content}, {"required", true}};
  }
  return op;
}

Json PathParam(const char* name) {
  return {{"name", name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}};
}

std::string OperationSuffix(const ResourceType& t, bool namespaced) {
  std::string g = t.group.empty() ? "Core" : t.group.substr(0, t.group.find('.'));
  g[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(g[0])));
  std::string v = t.version;
  v[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(v[0])));
  return g + v + (namespaced ? "Namespaced" : "") + t.kind;
}

void AddPaths(const ResourceType& t, Json& paths) {
  std::string base = "/" + GvPath(t) + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.plural;
  std::string suffix = OperationSuffix(t, t.namespaced);
  Json json_types = {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"};
  Json patch_types = {"application/json-patch+json", "application/merge-patch+json"};
  if (!t.custom) patch_types.push_back("application/strategic-merge-patch+json");
  Json ns_param = t.namespaced ? Json::array({PathParam("namespace")}) : Json::array();
  Json item_params = ns_param;
  item_params.push_back(PathParam("name"));

  paths[base] = {{"parameters", ns_param},
                 {"get", Operation(t, "list", "list" + suffix, false, Json::array())},
                 {"post", Operation(t, "post", "create" + suffix, true, json_types)}};
  paths[base + "/{name}"] = {
      {"parameters", item_params},
      {"get", Operation(t, "get", "read" + suffix, false, Json::array())},
      {"put", Operation(t, "put", "replace" + suffix, true, json_types)},
      {"patch", Operation(t, "patch", "patch" + suffix, true, patch_types)},
      {"delete", Operation(t, "delete", "delete" + suffix, false, Json::array())}};
  if (t.has_status) {
    paths[base + "/{name}/status"] = {
        {"parameters", item_params},
        {"get", Operation(t, "get", "read" + suffix + "Status", false, Json::array())},
        {"put", Operation(t, "put", "replace" + suffix + "Status", true, json_types)},
        {"patch", Operation(t, "patch", "patch" + suffix + "Status", true, patch_types)}};
  }
  if (t.namespaced) {
    paths["/" + GvPath(t) + "/" + t.plural] = {
        {"get", Operation(t, "list", "list" + OperationSuffix(t, false) + "ForAllNamespaces", false,
                          Json::array())}};
  }
}

Json Schema(const ResourceType& t) {
  if (!t.custom || !t.schema) {
    return {{"type", "object"},
            {"description", t.kind + ": the test API server publishes no schema for this kind (any "
                                     "fields; see docs/development/test-apiserver.md)."},
            {"x-kubernetes-preserve-unknown-fields", true}};
  }
  Json s = *t.schema;
  if (!s.contains("properties") || !s["properties"].is_object()) s["properties"] = Json::object();
  Json meta = {{"description", "Standard object's metadata."}, {"allOf", {Ref(kObjectMetaRef)}}};
  s["properties"]["metadata"] = meta;
  s["x-kubernetes-group-version-kind"] = Json::array({Gvk(t)});
  return s;
}

Json ObjectMetaSchema() {
  Json string = {{"type", "string"}};
  Json string_map = {{"type", "object"}, {"additionalProperties", string}};
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
            {"ownerReferences",
             {{"type", "array"},
              {"items", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}};
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

}  // namespace

std::optional<Json> OpenApiV3Document(const std::vector<ResourceType>& types,
                                      const std::string& gv_path) {
  Json paths = Json::object();
  Json schemas = {{kObjectMetaRef, ObjectMetaSchema()},
                  {kPatchRef,
                   {{"type", "object"},
                    {"description",
                     "Patch is provided to give a concrete name and type to the Kubernetes PATCH "
                     "request body."}}}};
  bool any = false;
  for (const ResourceType& t : types) {
    if (GvPath(t) != gv_path) continue;
    any = true;
    AddPaths(t, paths);
    schemas[SchemaName(t)] = Schema(t);
  }
  if (!any) return std::nullopt;
  return Json{{"openapi", "3.0.0"},
              {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0-dljob-test"}}},
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

}  // namespace dljob::apiserver
