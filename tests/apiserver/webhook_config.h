// Validating admission webhooks as the real API server configures and matches them: the
// admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration kind's defaults and validation,
// and which of its webhooks a request must be sent to.
//
// Defaults (the real server's SetDefaults_*): failurePolicy Fail, matchPolicy Equivalent,
// namespaceSelector and objectSelector {}, timeoutSeconds 10, each rule's scope "*", a service's
// port 443. Validation, with the real server's messages: names fully qualified (a DNS subdomain
// of at least three segments) and unique, admissionReviewVersions including v1 or v1beta1,
// sideEffects None or NoneOnDryRun, timeoutSeconds 1-30, failurePolicy, matchPolicy, rules
// (operations, apiGroups, apiVersions, resources, scope), label selectors' operators and values,
// exactly one of clientConfig.url (https, no user, query or fragment) and clientConfig.service
// (name, namespace, port, path segments). Not checked: matchConditions (CEL), which are also not
// evaluated when matching.
//
// Matching (the real server's rules, namespace and object matchers): a rule matches when the
// operation, API group, version, resource ("*", "x/*", "*/status", "dljobs/status") and scope
// match; then the namespaceSelector must match the labels of the request's namespace (of the
// namespace itself for a Namespace; ignored for other cluster-scoped objects) and the
// objectSelector those of the new or the old object. The configurations' own kinds are never
// sent to webhooks, as on the real server.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/field_errors.h"
#include "tests/apiserver/resource_types.h"

namespace dljob::apiserver {

inline constexpr char kWebhookConfigurationGroup[] = "admissionregistration.k8s.io";
inline constexpr char kValidatingWebhookConfigurations[] = "validatingwebhookconfigurations";

struct WebhookRule {
  std::vector<std::string> operations;  // CREATE, UPDATE, DELETE, CONNECT, "*"
  std::vector<std::string> api_groups;
  std::vector<std::string> api_versions;
  std::vector<std::string> resources;  // "dljobs", "dljobs/status", "*", "*/*"
  std::string scope = "*";             // "*", "Namespaced", "Cluster"
};

struct WebhookService {
  std::string ns;
  std::string name;
  std::string path;  // "" for none
  int port = 443;
};

// One entry of a configuration's webhooks, as stored (defaults applied).
struct ValidatingWebhook {
  std::string name;
  std::optional<std::string> url;
  std::optional<WebhookService> service;
  std::string ca_bundle;  // clientConfig.caBundle decoded: PEM text ("" for the system's roots)
  bool ca_bundle_valid = true;  // false when caBundle was not base64
  bool fail_open = false;       // failurePolicy Ignore
  int timeout_seconds = 10;
  std::string side_effects;
  std::vector<std::string> admission_review_versions;
  std::vector<WebhookRule> rules;
  nlohmann::json namespace_selector;  // metav1.LabelSelector; null or {} selects everything
  nlohmann::json object_selector;
};

// A request as admission sees it (the real server's admission.Attributes).
struct AdmissionAttributes {
  std::string operation;  // CREATE, UPDATE, DELETE
  std::string group;
  std::string version;
  std::string resource;  // plural
  std::string subresource;
  std::string kind;
  std::string ns;  // the object's namespace; for a Namespace, its own name
  std::string name;
  const nlohmann::json* object = nullptr;      // null for DELETE
  const nlohmann::json* old_object = nullptr;  // null for CREATE
};

bool IsValidatingWebhookConfigurationType(const ResourceType& type);

// Fills in what the real server defaults in a ValidatingWebhookConfiguration.
void DefaultWebhookConfiguration(nlohmann::json& config);
// The errors of a configuration (after defaulting), with their field paths ("webhooks[0].name").
FieldErrors ValidateWebhookConfiguration(const nlohmann::json& config);

// The webhooks of a stored configuration, in order.
std::vector<ValidatingWebhook> WebhooksOf(const nlohmann::json& config);

// Whether a rule covers the request (operation, group, version, resource/subresource, scope).
bool RuleMatches(const WebhookRule& rule, const AdmissionAttributes& request);
// Whether metav1.LabelSelector `selector` selects `labels` (an object's metadata.labels). A null
// or empty selector selects everything.
bool SelectorMatches(const nlohmann::json& selector, const nlohmann::json& labels);
// Whether `hook` is to be called for `request`: one of its rules matches and so do its selectors.
// `namespace_labels` are the labels of the request's namespace as stored (null when it has none
// or the object is cluster-scoped); for a Namespace being created or updated the object's own
// labels are used instead, as on the real server.
bool ShouldCallWebhook(const ValidatingWebhook& hook, const AdmissionAttributes& request,
                       const nlohmann::json& namespace_labels);

// Requests for the webhook configurations themselves are never sent to webhooks.
bool IsExemptFromWebhooks(const AdmissionAttributes& request);

}  // namespace dljob::apiserver
