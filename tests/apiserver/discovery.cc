// See discovery.h.
#include "tests/apiserver/discovery.h"

#include <set>

namespace dljob::apiserver {
namespace {

Json GroupVersion(const std::string& group, const std::string& version) {
  return {{"groupVersion", group + "/" + version}, {"version", version}};
}

// The group's versions, in registration order, without repeats.
std::vector<std::string> VersionsOf(const std::vector<ResourceType>& types,
                                    const std::string& group) {
  std::vector<std::string> versions;
  for (const ResourceType& t : types) {
    if (t.group != group) continue;
    bool seen = false;
    for (const std::string& v : versions) seen = seen || v == t.version;
    if (!seen) versions.push_back(t.version);
  }
  return versions;
}

Json GroupJson(const std::vector<ResourceType>& types, const std::string& group) {
  Json versions = Json::array();
  for (const std::string& v : VersionsOf(types, group)) versions.push_back(GroupVersion(group, v));
  return {{"name", group}, {"versions", versions}, {"preferredVersion", versions.at(0)}};
}

Json SubresourceJson(const ResourceType& t, const std::string& sub, const std::string& kind,
                     Json verbs) {
  return {{"name", t.plural + "/" + sub},
          {"singularName", ""},
          {"namespaced", t.namespaced},
          {"kind", kind},
          {"verbs", std::move(verbs)}};
}

}  // namespace

Json VersionInfo() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0-dljob-test"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-01-01T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

Json ApiVersions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

Json GroupList(const std::vector<ResourceType>& types) {
  Json groups = Json::array();
  std::set<std::string> seen;
  for (const ResourceType& t : types) {
    if (t.group.empty() || !seen.insert(t.group).second) continue;
    groups.push_back(GroupJson(types, t.group));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<Json> GroupDocument(const std::vector<ResourceType>& types,
                                  const std::string& group) {
  if (group.empty() || VersionsOf(types, group).empty()) return std::nullopt;
  Json doc = GroupJson(types, group);
  doc["kind"] = "APIGroup";
  doc["apiVersion"] = "v1";
  return doc;
}

std::optional<Json> ResourceList(const std::vector<ResourceType>& types, const std::string& group,
                                 const std::string& version) {
  Json resources = Json::array();
  for (const ResourceType& t : types) {
    if (t.group != group || t.version != version) continue;
    Json r = {{"name", t.plural},
              {"singularName", t.singular},
              {"namespaced", t.namespaced},
              {"kind", t.kind},
              {"verbs", {"create", "delete", "get", "list", "patch", "update", "watch"}}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    if (!t.categories.empty()) r["categories"] = t.categories;
    resources.push_back(std::move(r));
    if (t.has_status) {
      resources.push_back(SubresourceJson(t, "status", t.kind, {"get", "patch", "update"}));
    }
    for (const std::string& sub : t.extra_subresources) {
      if (sub == "binding") resources.push_back(SubresourceJson(t, sub, "Binding", {"create"}));
      if (sub == "log") resources.push_back(SubresourceJson(t, sub, t.kind, {"get"}));
    }
  }
  if (resources.empty()) return std::nullopt;
  return Json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? version : group + "/" + version},
              {"resources", resources}};
}

}  // namespace dljob::apiserver
