// See webhook_config.h.
#include "tests/apiserver/webhook_config.h"

#include <algorithm>
#include <set>

#include "base/base64.h"
#include "base/json_fields.h"
#include "kube/label_selector.h"
#include "kube/object_fields.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

std::string Indexed(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::vector<std::string> StringsAt(const Json& object, const char* key) {
  std::vector<std::string> out;
  const Json& list = FieldOf(object, key);
  if (!list.is_array()) return out;
  for (const Json& s : list) out.push_back(s.is_string() ? s.get<std::string>() : "");
  return out;
}

bool HasStar(const std::vector<std::string>& items) {
  return std::find(items.begin(), items.end(), "*") != items.end();
}

bool ExactOrWildcard(const std::vector<std::string>& items, const std::string& requested) {
  return HasStar(items) || std::find(items.begin(), items.end(), requested) != items.end();
}

// "res/sub" → {res, sub}; "res" → {res, ""}.
std::pair<std::string, std::string> SplitResource(const std::string& resource) {
  size_t slash = resource.find('/');
  if (slash == std::string::npos) return {resource, ""};
  return {resource.substr(0, slash), resource.substr(slash + 1)};
}

std::string JoinComma(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void DefaultSelector(Json& hook, const char* key) {
  if (!hook.contains(key) || hook[key].is_null()) hook[key] = Json::object();
}

void ValidateResources(const std::vector<std::string>& resources, const std::string& path,
                       FieldErrors& out) {
  if (resources.empty()) out.push_back(Required(path));
  std::set<std::string> with_any_sub;           // x/*
  std::set<std::string> sub_with_any_resource;  // */x
  bool double_star = false, single_star = false, plain = false;
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string& r = resources[i];
    if (r.empty()) {
      out.push_back(Required(Indexed(path, i)));
      continue;
    }
    double_star = double_star || r == "*/*";
    single_star = single_star || r == "*";
    auto [res, sub] = SplitResource(r);
    if (r.find('/') == std::string::npos) {
      plain = r != "*";
      continue;
    }
    if (with_any_sub.count(res)) {
      out.push_back(
          Invalid(Indexed(path, i), r, "if '" + res + "/*' is present, must not specify " + r));
    }
    if (sub_with_any_resource.count(sub)) {
      out.push_back(
          Invalid(Indexed(path, i), r, "if '*/" + sub + "' is present, must not specify " + r));
    }
    if (sub == "*") with_any_sub.insert(res);
    if (res == "*") sub_with_any_resource.insert(sub);
  }
  if (resources.size() > 1 && double_star) {
    out.push_back(
        Invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  }
  if (single_star && plain) {
    out.push_back(Invalid(path, resources,
                          "if '*' is present, must not specify other resources without "
                          "subresources"));
  }
}

void ValidateRule(const Json& rule, const std::string& path, FieldErrors& out) {
  std::vector<std::string> ops = StringsAt(rule, "operations");
  if (ops.empty()) out.push_back(Required(path + ".operations"));
  if (ops.size() > 1 && HasStar(ops)) {
    out.push_back(
        Invalid(path + ".operations", ops, "if '*' is present, must not specify other operations"));
  }
  static const std::vector<std::string> kOperations = {"*", "CONNECT", "CREATE", "DELETE",
                                                       "UPDATE"};
  for (size_t i = 0; i < ops.size(); ++i) {
    if (std::find(kOperations.begin(), kOperations.end(), ops[i]) == kOperations.end()) {
      out.push_back(NotSupported(Indexed(path + ".operations", i), ops[i], kOperations));
    }
  }
  std::vector<std::string> groups = StringsAt(rule, "apiGroups");
  if (groups.empty()) out.push_back(Required(path + ".apiGroups"));
  if (groups.size() > 1 && HasStar(groups)) {
    out.push_back(Invalid(path + ".apiGroups", groups,
                          "if '*' is present, must not specify other API groups"));
  }
  std::vector<std::string> versions = StringsAt(rule, "apiVersions");
  if (versions.empty()) out.push_back(Required(path + ".apiVersions"));
  if (versions.size() > 1 && HasStar(versions)) {
    out.push_back(Invalid(path + ".apiVersions", versions,
                          "if '*' is present, must not specify other API versions"));
  }
  for (size_t i = 0; i < versions.size(); ++i) {
    if (versions[i].empty()) out.push_back(Required(Indexed(path + ".apiVersions", i)));
  }
  ValidateResources(StringsAt(rule, "resources"), path + ".resources", out);
  std::string scope = StringAt(rule, "scope");
  if (FieldOf(rule, "scope").is_string() && scope != "*" && scope != "Cluster" &&
      scope != "Namespaced") {
    out.push_back(NotSupported(path + ".scope", scope, {"*", "Cluster", "Namespaced"}));
  }
}

void ValidateSelector(const Json& selector, const std::string& path, FieldErrors& out) {
  const Json& labels = FieldOf(selector, "matchLabels");
  if (labels.is_object()) {
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      for (const std::string& why : QualifiedName(it.key())) {
        out.push_back(Invalid(path + ".matchLabels", it.key(), why));
      }
      if (!it->is_string()) continue;
      for (const std::string& why : LabelValue(it->get<std::string>())) {
        out.push_back(Invalid(path + ".matchLabels", *it, why));
      }
    }
  }
  const Json& expressions = FieldOf(selector, "matchExpressions");
  for (size_t i = 0; expressions.is_array() && i < expressions.size(); ++i) {
    const Json& e = expressions[i];
    std::string at = Indexed(path + ".matchExpressions", i);
    std::string op = StringAt(e, "operator");
    bool has_values = FieldOf(e, "values").is_array() && !FieldOf(e, "values").empty();
    if (op == "In" || op == "NotIn") {
      if (!has_values) {
        out.push_back(
            Required(at + ".values", "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (has_values) {
        out.push_back(Forbidden(at + ".values",
                                "may not be specified when `operator` is 'Exists' or "
                                "'DoesNotExist'"));
      }
    } else {
      out.push_back(Invalid(at + ".operator", op, "not a valid selector operator"));
    }
    for (const std::string& why : QualifiedName(StringAt(e, "key"))) {
      out.push_back(Invalid(at + ".key", StringAt(e, "key"), why));
    }
  }
}

// apiserver's ValidateWebhookURL (https only).
void ValidateUrl(const std::string& url, const std::string& path, FieldErrors& out) {
  const std::string form = "; desired format: https://host[/path]";
  size_t scheme_end = url.find("://");
  std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  std::string rest = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
  std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (scheme != "https") {
    out.push_back(Invalid(path, scheme, "'https' is the only allowed URL scheme" + form));
  }
  std::string host =
      authority.substr(authority.find('@') == std::string::npos ? 0 : authority.find('@') + 1);
  if (scheme_end == std::string::npos || host.empty()) {
    out.push_back(Invalid(path, host, "host must be provided" + form));
  }
  if (authority.find('@') != std::string::npos) {
    out.push_back(Invalid(path, authority.substr(0, authority.find('@')),
                          "user information is not permitted in the URL"));
  }
  if (size_t hash = url.find('#'); hash != std::string::npos && hash + 1 < url.size()) {
    out.push_back(Invalid(path, url.substr(hash + 1), "fragments are not permitted in the URL"));
  }
  if (size_t q = url.find('?'); q != std::string::npos && q + 1 < url.size()) {
    std::string query = url.substr(q + 1, url.find('#', q) - q - 1);
    out.push_back(Invalid(path, query, "query parameters are not permitted in the URL"));
  }
}

// apiserver's ValidateWebhookService.
void ValidateService(const Json& service, const std::string& path, FieldErrors& out) {
  if (StringAt(service, "name").empty()) {
    out.push_back(Required(path + ".name", "service name is required"));
  }
  if (StringAt(service, "namespace").empty()) {
    out.push_back(Required(path + ".namespace", "service namespace is required"));
  }
  const Json& port = FieldOf(service, "port");
  if (!port.is_number_integer() || port.get<int64_t>() < 1 || port.get<int64_t>() > 65535) {
    out.push_back(
        Invalid(path + ".port", port, "port is not valid: must be between 1 and 65535, inclusive"));
  }
  std::string url_path = StringAt(service, "path");
  if (url_path.empty() || url_path == "/") return;
  if (url_path == "//") {
    out.push_back(Invalid(path + ".path", url_path, "segment[0] may not be empty"));
    return;
  }
  if (url_path[0] != '/') out.push_back(Invalid(path + ".path", url_path, "must start with a '/'"));
  std::string check = url_path.substr(1);
  if (!check.empty() && check.back() == '/') check.pop_back();
  size_t index = 0, start = 0;
  while (true) {
    size_t slash = check.find('/', start);
    std::string step =
        check.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string segment = "segment[" + std::to_string(index) + "]";
    if (step.empty()) {
      out.push_back(Invalid(path + ".path", url_path, segment + " may not be empty"));
    } else {
      for (const std::string& why : Dns1123Subdomain(step)) {
        out.push_back(Invalid(path + ".path", url_path, segment + ": " + why));
      }
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
    ++index;
  }
}

void ValidateWebhook(const Json& hook, const std::string& path, FieldErrors& out) {
  std::string name = StringAt(hook, "name");
  if (name.empty()) {
    out.push_back(Required(path + ".name"));
  } else if (std::vector<std::string> why = Dns1123Subdomain(name); !why.empty()) {
    std::string joined;
    for (const std::string& w : why) joined += (joined.empty() ? "" : ",") + w;
    out.push_back(Invalid(path + ".name", name, joined));
  } else if (std::count(name.begin(), name.end(), '.') < 2) {
    out.push_back(Invalid(path + ".name", name,
                          "should be a domain with at least three segments separated by dots"));
  }
  const Json& rules = FieldOf(hook, "rules");
  for (size_t i = 0; rules.is_array() && i < rules.size(); ++i) {
    ValidateRule(rules[i], Indexed(path + ".rules", i), out);
  }
  std::string policy = StringAt(hook, "failurePolicy");
  if (policy != "Fail" && policy != "Ignore") {
    out.push_back(NotSupported(path + ".failurePolicy", policy, {"Fail", "Ignore"}));
  }
  std::string match = StringAt(hook, "matchPolicy");
  if (match != "Equivalent" && match != "Exact") {
    out.push_back(NotSupported(path + ".matchPolicy", match, {"Equivalent", "Exact"}));
  }
  const Json& side_effects = FieldOf(hook, "sideEffects");
  if (side_effects.is_null()) {
    out.push_back(Required(path + ".sideEffects", "must specify one of None, NoneOnDryRun"));
  } else if (StringAt(hook, "sideEffects") != "None" &&
             StringAt(hook, "sideEffects") != "NoneOnDryRun") {
    out.push_back(NotSupported(path + ".sideEffects", side_effects, {"None", "NoneOnDryRun"}));
  }
  const Json& timeout = FieldOf(hook, "timeoutSeconds");
  if (!timeout.is_number_integer() || timeout.get<int64_t>() < 1 || timeout.get<int64_t>() > 30) {
    out.push_back(Invalid(path + ".timeoutSeconds", timeout,
                          "the timeout value must be between 1 and 30 seconds"));
  }
  ValidateSelector(FieldOf(hook, "namespaceSelector"), path + ".namespaceSelector", out);
  ValidateSelector(FieldOf(hook, "objectSelector"), path + ".objectSelector", out);
  const Json& cc = FieldOf(hook, "clientConfig");
  bool has_url = FieldOf(cc, "url").is_string();
  bool has_service = FieldOf(cc, "service").is_object();
  if (has_url == has_service) {
    out.push_back(Required(path + ".clientConfig", "exactly one of url or service is required"));
  } else if (has_url) {
    ValidateUrl(StringAt(cc, "url"), path + ".clientConfig.url", out);
  } else {
    ValidateService(cc["service"], path + ".clientConfig.service", out);
  }
}

void ValidateReviewVersions(const Json& hook, const std::string& path, FieldErrors& out) {
  std::vector<std::string> versions = StringsAt(hook, "admissionReviewVersions");
  if (versions.empty()) {
    out.push_back(Required(path, "must specify one of v1, v1beta1"));
    return;
  }
  std::set<std::string> seen;
  bool known = false;
  for (size_t i = 0; i < versions.size(); ++i) {
    if (!seen.insert(versions[i]).second) {
      out.push_back(Invalid(Indexed(path, i), versions[i], "duplicate version"));
      continue;
    }
    for (const std::string& why : Dns1035Label(versions[i])) {
      out.push_back(Invalid(Indexed(path, i), versions[i], why));
    }
    known = known || versions[i] == "v1" || versions[i] == "v1beta1";
  }
  if (!known) out.push_back(Invalid(path, versions, "must include at least one of v1, v1beta1"));
}

// metav1.LabelSelector as the selector grammar of kube/label_selector.h.
std::optional<kube::LabelSelector> ToLabelSelector(const Json& selector) {
  std::vector<std::string> terms;
  const Json& labels = FieldOf(selector, "matchLabels");
  if (labels.is_object()) {
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      terms.push_back(it.key() + "=" + (it->is_string() ? it->get<std::string>() : ""));
    }
  }
  const Json& expressions = FieldOf(selector, "matchExpressions");
  for (size_t i = 0; expressions.is_array() && i < expressions.size(); ++i) {
    const Json& e = expressions[i];
    std::string key = StringAt(e, "key");
    std::string op = StringAt(e, "operator");
    std::vector<std::string> values = StringsAt(e, "values");
    if (op == "In" || op == "NotIn") {
      terms.push_back(key + (op == "In" ? " in (" : " notin (") + JoinComma(values) + ")");
    } else if (op == "Exists") {
      terms.push_back(key);
    } else if (op == "DoesNotExist") {
      terms.push_back("!" + key);
    } else {
      return std::nullopt;
    }
  }
  std::string text;
  for (const std::string& t : terms) text += (text.empty() ? "" : ",") + t;
  Result<kube::LabelSelector> parsed = kube::LabelSelector::Parse(text);
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

}  // namespace

bool IsValidatingWebhookConfigurationType(const ResourceType& type) {
  return !type.custom && type.group == kWebhookConfigurationGroup &&
         type.plural == kValidatingWebhookConfigurations;
}

void DefaultWebhookConfiguration(Json& config) {
  if (!config.is_object() || !config.contains("webhooks") || !config["webhooks"].is_array()) {
    return;
  }
  for (Json& hook : config["webhooks"]) {
    if (!hook.is_object()) continue;
    if (!hook.contains("failurePolicy")) hook["failurePolicy"] = "Fail";
    if (!hook.contains("matchPolicy")) hook["matchPolicy"] = "Equivalent";
    DefaultSelector(hook, "namespaceSelector");
    DefaultSelector(hook, "objectSelector");
    if (!hook.contains("timeoutSeconds")) hook["timeoutSeconds"] = 10;
    if (hook.contains("rules") && hook["rules"].is_array()) {
      for (Json& rule : hook["rules"]) {
        if (rule.is_object() && !rule.contains("scope")) rule["scope"] = "*";
      }
    }
    Json* service = nullptr;
    if (hook.contains("clientConfig") && hook["clientConfig"].is_object() &&
        hook["clientConfig"].contains("service") && hook["clientConfig"]["service"].is_object()) {
      service = &hook["clientConfig"]["service"];
    }
    if (service && !service->contains("port")) (*service)["port"] = 443;
  }
}

FieldErrors ValidateWebhookConfiguration(const Json& config) {
  FieldErrors out;
  const Json& hooks = FieldOf(config, "webhooks");
  std::set<std::string> names;
  for (size_t i = 0; hooks.is_array() && i < hooks.size(); ++i) {
    std::string path = Indexed("webhooks", i);
    ValidateWebhook(hooks[i], path, out);
    ValidateReviewVersions(hooks[i], path + ".admissionReviewVersions", out);
    std::string name = StringAt(hooks[i], "name");
    if (!name.empty() && !names.insert(name).second) {
      out.push_back(Duplicate(path + ".name", name));
    }
  }
  return out;
}

std::vector<ValidatingWebhook> WebhooksOf(const Json& config) {
  std::vector<ValidatingWebhook> out;
  const Json& hooks = FieldOf(config, "webhooks");
  if (!hooks.is_array()) return out;
  for (const Json& h : hooks) {
    ValidatingWebhook hook;
    hook.name = StringAt(h, "name");
    const Json& cc = FieldOf(h, "clientConfig");
    if (FieldOf(cc, "url").is_string()) hook.url = StringAt(cc, "url");
    if (const Json& s = FieldOf(cc, "service"); s.is_object()) {
      hook.service = WebhookService{
          StringAt(s, "namespace"), StringAt(s, "name"), StringAt(s, "path"),
          FieldOf(s, "port").is_number_integer() ? FieldOf(s, "port").get<int>() : 443};
    }
    if (std::string bundle = StringAt(cc, "caBundle"); !bundle.empty()) {
      std::optional<std::string> pem = Base64Decode(bundle);
      hook.ca_bundle_valid = pem.has_value();
      hook.ca_bundle = pem.value_or("");
    }
    hook.fail_open = StringAt(h, "failurePolicy") == "Ignore";
    if (FieldOf(h, "timeoutSeconds").is_number_integer()) {
      hook.timeout_seconds = FieldOf(h, "timeoutSeconds").get<int>();
    }
    hook.side_effects = StringAt(h, "sideEffects");
    hook.admission_review_versions = StringsAt(h, "admissionReviewVersions");
    const Json& rules = FieldOf(h, "rules");
    for (size_t i = 0; rules.is_array() && i < rules.size(); ++i) {
      WebhookRule rule;
      rule.operations = StringsAt(rules[i], "operations");
      rule.api_groups = StringsAt(rules[i], "apiGroups");
      rule.api_versions = StringsAt(rules[i], "apiVersions");
      rule.resources = StringsAt(rules[i], "resources");
      if (std::string scope = StringAt(rules[i], "scope"); !scope.empty()) rule.scope = scope;
      hook.rules.push_back(std::move(rule));
    }
    hook.namespace_selector = FieldOf(h, "namespaceSelector");
    hook.object_selector = FieldOf(h, "objectSelector");
    out.push_back(std::move(hook));
  }
  return out;
}

bool RuleMatches(const WebhookRule& rule, const AdmissionAttributes& request) {
  bool is_namespace = request.group.empty() && request.resource == "namespaces";
  bool scope = rule.scope == "*" ||
               (rule.scope == "Namespaced" && !is_namespace && !request.ns.empty()) ||
               (rule.scope == "Cluster" && (is_namespace || request.ns.empty()));
  if (!scope || !ExactOrWildcard(rule.operations, request.operation) ||
      !ExactOrWildcard(rule.api_groups, request.group) ||
      !ExactOrWildcard(rule.api_versions, request.version)) {
    return false;
  }
  for (const std::string& r : rule.resources) {
    auto [res, sub] = SplitResource(r);
    if ((res == "*" || res == request.resource) && (sub == "*" || sub == request.subresource)) {
      return true;
    }
  }
  return false;
}

bool SelectorMatches(const Json& selector, const Json& labels) {
  if (!selector.is_object() || selector.empty()) return true;
  std::optional<kube::LabelSelector> parsed = ToLabelSelector(selector);
  return parsed && parsed->Matches(labels);  // an unparsable selector (refused on write) selects
                                             // nothing
}

bool ShouldCallWebhook(const ValidatingWebhook& hook, const AdmissionAttributes& request,
                       const Json& namespace_labels) {
  bool rule = std::any_of(hook.rules.begin(), hook.rules.end(),
                          [&](const WebhookRule& r) { return RuleMatches(r, request); });
  if (!rule) return false;
  bool is_namespace = request.group.empty() && request.resource == "namespaces";
  if (!request.ns.empty() || is_namespace) {
    const Json* labels = &namespace_labels;
    Json own;
    if (is_namespace && request.subresource.empty() && request.object &&
        (request.operation == "CREATE" || request.operation == "UPDATE")) {
      own = kube::LabelsOf(*request.object);
      labels = &own;
    }
    if (!SelectorMatches(hook.namespace_selector, *labels)) return false;
  }
  const Json& selector = hook.object_selector;
  if (!selector.is_object() || selector.empty()) return true;
  auto selects = [&](const Json* object) {
    return object && !object->is_null() && SelectorMatches(selector, kube::LabelsOf(*object));
  };
  return selects(request.object) || selects(request.old_object);
}

bool IsExemptFromWebhooks(const AdmissionAttributes& request) {
  return request.group == kWebhookConfigurationGroup &&
         (request.resource == "validatingwebhookconfigurations" ||
          request.resource == "mutatingwebhookconfigurations");
}

}  // namespace dljob::apiserver
