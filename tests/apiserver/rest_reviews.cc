// See rest_reviews.h.
#include "tests/apiserver/rest_reviews.h"

#include <algorithm>
#include <optional>

#include "base/base64.h"

namespace dljob::apiserver {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

ResourceType Rbac(std::string plural, std::string kind, bool namespaced) {
  ResourceType t;
  t.group = kRbacGroup;
  t.version = "v1";
  t.singular = kind;
  std::transform(t.singular.begin(), t.singular.end(), t.singular.begin(), ::tolower);
  t.plural = std::move(plural);
  t.kind = std::move(kind);
  t.namespaced = namespaced;
  return t;
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> Strs(const Json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

bool Has(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

struct Request {
  std::string user, ns, verb, group, resource, name;
  std::vector<std::string> groups;
};

bool SubjectMatches(const Json& subject, const std::string& binding_ns, const Request& r) {
  const std::string kind = Str(subject, "kind");
  const std::string name = Str(subject, "name");
  if (kind == "User") return name == r.user;
  if (kind == "Group") return Has(r.groups, name);
  if (kind == "ServiceAccount") {
    std::string ns = Str(subject, "namespace");
    if (ns.empty()) ns = binding_ns;
    return r.user == "system:serviceaccount:" + ns + ":" + name;
  }
  return false;
}

// One PolicyRule against the request (RBAC's RuleAllows).
bool RuleAllows(const Json& rule, const Request& r) {
  const std::vector<std::string> verbs = Strs(rule, "verbs");
  if (!Has(verbs, "*") && !Has(verbs, r.verb)) return false;
  const std::vector<std::string> groups = Strs(rule, "apiGroups");
  if (!Has(groups, "*") && !Has(groups, r.group)) return false;
  const std::vector<std::string> resources = Strs(rule, "resources");
  const size_t slash = r.resource.find('/');
  const bool wildcard_sub =
      slash != std::string::npos && Has(resources, "*" + r.resource.substr(slash));
  if (!Has(resources, "*") && !Has(resources, r.resource) && !wildcard_sub) return false;
  const std::vector<std::string> names = Strs(rule, "resourceNames");
  return names.empty() || Has(names, r.name);
}

const Json* FindNamed(const std::vector<Json>& objects, const std::string& ns,
                      const std::string& name) {
  for (const Json& o : objects) {
    const Json meta = o.value("metadata", Json::object());
    if (Str(meta, "name") == name && Str(meta, "namespace") == ns) return &o;
  }
  return nullptr;
}

// The reason of an allowing binding, or "" when `binding` does not allow the request.
std::string BindingAllows(const Json& binding, const RbacObjects& rbac, const Request& r) {
  const Json meta = binding.value("metadata", Json::object());
  const std::string binding_ns = Str(meta, "namespace");
  std::optional<Json> subject;
  for (const Json& s : binding.value("subjects", Json::array())) {
    if (SubjectMatches(s, binding_ns, r)) {
      subject = s;
      break;
    }
  }
  if (!subject) return "";
  const Json ref = binding.value("roleRef", Json::object());
  const std::string ref_kind = Str(ref, "kind");
  const Json* role = ref_kind == "ClusterRole" ? FindNamed(rbac.cluster_roles, "", Str(ref, "name"))
                     : ref_kind == "Role"      ? FindNamed(rbac.roles, binding_ns, Str(ref, "name"))
                                               : nullptr;
  if (!role) return "";
  for (const Json& rule : role->value("rules", Json::array())) {
    if (!RuleAllows(rule, r)) continue;
    const std::string binding_name =
        binding_ns.empty() ? Str(meta, "name") : Str(meta, "name") + "/" + binding_ns;
    return "RBAC: allowed by " +
           std::string(binding_ns.empty() ? "ClusterRoleBinding" : "RoleBinding") + " \"" +
           binding_name + "\" of " + ref_kind + " \"" + Str(ref, "name") + "\" to " +
           Str(*subject, "kind") + " \"" + Str(*subject, "name") + "\"";
  }
  return "";
}

std::vector<Json> Items(const ObjectStore& store, const ResourceRegistry& registry,
                        const std::string& plural, const std::string& group) {
  std::optional<ResourceType> type = registry.Find(group, "v1", plural);
  if (!type) return {};
  ApiResult<Json> list = store.List(*type, "", ListQuery{});
  if (!list.ok()) return {};
  return list->value("items", Json::array()).get<std::vector<Json>>();
}

}  // namespace

std::vector<ResourceType> RbacTypes() {
  return {Rbac("roles", "Role", true), Rbac("rolebindings", "RoleBinding", true),
          Rbac("clusterroles", "ClusterRole", false),
          Rbac("clusterrolebindings", "ClusterRoleBinding", false)};
}

Json ReviewToken(const std::string& token, const std::vector<Json>& secrets) {
  if (!token.empty()) {
    for (const Json& secret : secrets) {
      if (Str(secret, "type") != "kubernetes.io/service-account-token") continue;
      std::optional<std::string> held =
          Base64Decode(Str(secret.value("data", Json::object()), "token"));
      if (!held || *held != token) continue;
      const Json meta = secret.value("metadata", Json::object());
      const Json annotations = meta.value("annotations", Json::object());
      const std::string ns = Str(meta, "namespace");
      Json user = {
          {"username", "system:serviceaccount:" + ns + ":" +
                           Str(annotations, "kubernetes.io/service-account.name")},
          {"groups",
           {"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}};
      if (std::string uid = Str(annotations, "kubernetes.io/service-account.uid"); !uid.empty()) {
        user["uid"] = uid;
      }
      return {{"authenticated", true}, {"user", user}};
    }
  }
  return {{"authenticated", false}, {"user", Json::object()}, {"error", "invalid bearer token"}};
}

Json ReviewAccess(const Json& spec, const RbacObjects& rbac) {
  const Json attrs = spec.value("resourceAttributes", Json());
  if (!attrs.is_object()) {
    return {{"allowed", false}, {"reason", "the test API server reviews resourceAttributes only"}};
  }
  Request r;
  r.user = Str(spec, "user");
  r.groups = Strs(spec, "groups");
  r.ns = Str(attrs, "namespace");
  r.verb = Str(attrs, "verb");
  r.group = Str(attrs, "group");
  r.resource = Str(attrs, "resource");
  if (std::string sub = Str(attrs, "subresource"); !sub.empty()) r.resource += "/" + sub;
  r.name = Str(attrs, "name");
  if (Has(r.groups, "system:masters")) return {{"allowed", true}, {"reason", ""}};
  for (const Json& b : rbac.cluster_role_bindings) {
    if (std::string why = BindingAllows(b, rbac, r); !why.empty()) {
      return {{"allowed", true}, {"reason", why}};
    }
  }
  if (!r.ns.empty()) {
    for (const Json& b : rbac.role_bindings) {
      if (Str(b.value("metadata", Json::object()), "namespace") != r.ns) continue;
      if (std::string why = BindingAllows(b, rbac, r); !why.empty()) {
        return {{"allowed", true}, {"reason", why}};
      }
    }
  }
  return {{"allowed", false}, {"reason", ""}};
}

bool ServeReview(const HttpRequest& request, const RestPath& path, const ObjectStore& store,
                 const ResourceRegistry& registry, ResponseWriter& out) {
  const bool token_review = path.group == "authentication.k8s.io" && path.plural == "tokenreviews";
  const bool access_review =
      path.group == "authorization.k8s.io" && path.plural == "subjectaccessreviews";
  if (path.kind != RestPath::Kind::kResource || path.version != "v1" ||
      (!token_review && !access_review)) {
    return false;
  }
  if (request.method != "POST" || !path.ns.empty() || !path.name.empty()) {
    RespondError(out, MethodNotAllowedError("only create (POST) is served for " + path.plural));
    return true;
  }
  Json review = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!review.is_object() || !review.value("spec", Json()).is_object()) {
    RespondError(out, BadRequestError(path.plural + ": the body must be an object with a spec"));
    return true;
  }
  if (token_review) {
    review["status"] =
        ReviewToken(Str(review["spec"], "token"), Items(store, registry, "secrets", ""));
  } else {
    RbacObjects rbac{Items(store, registry, "roles", kRbacGroup),
                     Items(store, registry, "rolebindings", kRbacGroup),
                     Items(store, registry, "clusterroles", kRbacGroup),
                     Items(store, registry, "clusterrolebindings", kRbacGroup)};
    review["status"] = ReviewAccess(review["spec"], rbac);
  }
  RespondJson(out, 201, review);
  return true;
}

}  // namespace dljob::apiserver
