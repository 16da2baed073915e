// The pure parts of validating admission webhooks: the configuration kind's defaults and
// validation, which requests a webhook matches, the AdmissionReview sent and how each kind of
// answer is read — every message as the real API server words it.
#include "tests/apiserver/webhook_config.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "tests/apiserver/admission_review.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

Json Configuration(Json hook) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "ValidatingWebhookConfiguration"},
          {"metadata", {{"name", "dljob"}}},
          {"webhooks", Json::array({std::move(hook)})}};
}

Json GoodHook() {
  return {{"name", "validate.dljob.io"},
          {"admissionReviewVersions", {"v1"}},
          {"sideEffects", "None"},
          {"clientConfig", {{"service", {{"namespace", "dljob-system"}, {"name", "dljob"}}}}},
          {"rules",
           {{{"operations", {"CREATE", "UPDATE"}},
             {"apiGroups", {"dljob.io"}},
             {"apiVersions", {"v1alpha1"}},
             {"resources", {"dljobs"}}}}}};
}

std::vector<std::string> Messages(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.ToString());
  return out;
}

TEST(WebhookConfigTest, DefaultsAreTheRealServers) {
  Json config = Configuration(GoodHook());
  DefaultWebhookConfiguration(config);
  const Json& hook = config["webhooks"][0];
  EXPECT_EQ(hook["failurePolicy"], "Fail");
  EXPECT_EQ(hook["matchPolicy"], "Equivalent");
  EXPECT_EQ(hook["namespaceSelector"], Json::object());
  EXPECT_EQ(hook["objectSelector"], Json::object());
  EXPECT_EQ(hook["timeoutSeconds"], 10);
  EXPECT_EQ(hook["rules"][0]["scope"], "*");
  EXPECT_EQ(hook["clientConfig"]["service"]["port"], 443);
  EXPECT_TRUE(ValidateWebhookConfiguration(config).empty())
      << ::testing::PrintToString(Messages(ValidateWebhookConfiguration(config)));
  Json again = config;
  DefaultWebhookConfiguration(again);
  EXPECT_EQ(again, config);  // defaults keep what is set
}

TEST(WebhookConfigTest, ValidationNamesEachFieldWithTheRealMessage) {
  Json hook = GoodHook();
  hook["name"] = "validate";
  hook.erase("sideEffects");
  hook["admissionReviewVersions"] = {"v2"};
  hook["timeoutSeconds"] = 31;
  hook["failurePolicy"] = "Sometimes";
  hook["clientConfig"]["url"] = "http://x";
  hook["rules"][0]["operations"] = {"CREATE", "PATCH"};
  hook["rules"][0]["resources"] = {"*", "dljobs"};
  hook["objectSelector"] = {
      {"matchExpressions", {{{"key", "a"}, {"operator", "In"}, {"values", Json::array()}}}}};
  Json config = Configuration(hook);
  DefaultWebhookConfiguration(config);
  std::vector<std::string> got = Messages(ValidateWebhookConfiguration(config));
  std::vector<std::string> want = {
      "webhooks[0].name: Invalid value: \"validate\": should be a domain with at least three "
      "segments separated by dots",
      "webhooks[0].rules[0].operations[1]: Unsupported value: \"PATCH\": supported values: "
      "\"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
      "webhooks[0].rules[0].resources: Invalid value: [\"*\",\"dljobs\"]: if '*' is present, "
      "must not specify other resources without subresources",
      "webhooks[0].failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", "
      "\"Ignore\"",
      "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
      "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and "
      "30 seconds",
      "webhooks[0].objectSelector.matchExpressions[0].values: Required value: must be specified "
      "when `operator` is 'In' or 'NotIn'",
      "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
      "webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one "
      "of v1, v1beta1",
  };
  EXPECT_EQ(got, want);

  Json two = Configuration(GoodHook());
  two["webhooks"].push_back(GoodHook());
  two["webhooks"][1]["clientConfig"] = {{"url", "https://u@h:1/p?q=1"}};
  DefaultWebhookConfiguration(two);
  EXPECT_EQ(Messages(ValidateWebhookConfiguration(two)),
            (std::vector<std::string>{
                "webhooks[1].clientConfig.url: Invalid value: \"u\": user information is not "
                "permitted in the URL",
                "webhooks[1].clientConfig.url: Invalid value: \"q=1\": query parameters are not "
                "permitted in the URL",
                "webhooks[1].name: Duplicate value: \"validate.dljob.io\""}));
}

AdmissionAttributes Request(const std::string& operation, const std::string& resource,
                            const std::string& sub = "", const std::string& ns = "default") {
  AdmissionAttributes a;
  a.operation = operation;
  a.group = "dljob.io";
  a.version = "v1alpha1";
  a.resource = resource;
  a.subresource = sub;
  a.kind = "DLJob";
  a.ns = ns;
  a.name = "mnist";
  return a;
}

TEST(WebhookConfigTest, RulesMatchAsTheRealServersDo) {
  struct Case {
    std::vector<std::string> resources;
    std::string operation;
    std::string subresource;
    std::string scope;
    std::string ns;
    bool match;
  };
  const std::vector<Case> cases = {
      {{"dljobs"}, "CREATE", "", "*", "default", true},
      {{"dljobs"}, "DELETE", "", "*", "default", false},  // operations: CREATE, UPDATE
      {{"dljobs"}, "UPDATE", "status", "*", "default", false},
      {{"dljobs/status"}, "UPDATE", "status", "*", "default", true},
      {{"dljobs/status"}, "UPDATE", "", "*", "default", false},
      {{"dljobs/*"}, "UPDATE", "status", "*", "default", true},
      {{"dljobs/*"}, "UPDATE", "", "*", "default", true},  // "x/*" holds the main resource too
      {{"*"}, "UPDATE", "", "*", "default", true},
      {{"*"}, "UPDATE", "status", "*", "default", false},
      {{"*/status"}, "UPDATE", "status", "*", "default", true},
      {{"*/*"}, "UPDATE", "status", "*", "default", true},
      {{"*/*"}, "CREATE", "", "*", "default", true},
      {{"pods"}, "CREATE", "", "*", "default", false},
      {{"dljobs"}, "CREATE", "", "Namespaced", "default", true},
      {{"dljobs"}, "CREATE", "", "Cluster", "default", false},
      {{"dljobs"}, "CREATE", "", "Cluster", "", true},
      {{"dljobs"}, "CREATE", "", "Namespaced", "", false},
  };
  for (const Case& c : cases) {
    WebhookRule rule;
    rule.operations = {"CREATE", "UPDATE"};
    rule.api_groups = {"dljob.io"};
    rule.api_versions = {"*"};
    rule.resources = c.resources;
    rule.scope = c.scope;
    EXPECT_EQ(RuleMatches(rule, Request(c.operation, "dljobs", c.subresource, c.ns)), c.match)
        << ::testing::PrintToString(c.resources) << " " << c.operation << " " << c.subresource
        << " scope " << c.scope << " ns " << c.ns;
  }
  WebhookRule any;
  any.operations = {"*"};
  any.api_groups = {"*"};
  any.api_versions = {"*"};
  any.resources = {"*"};
  EXPECT_TRUE(RuleMatches(any, Request("DELETE", "dljobs")));
  any.api_groups = {""};
  EXPECT_FALSE(RuleMatches(any, Request("DELETE", "dljobs")));  // core group only

  // Namespaces are cluster-scoped even though their requests carry their own name.
  AdmissionAttributes ns = Request("CREATE", "namespaces", "", "team-a");
  ns.group = "";
  ns.version = "v1";
  any.api_groups = {""};
  any.scope = "Cluster";
  EXPECT_TRUE(RuleMatches(any, ns));
  any.scope = "Namespaced";
  EXPECT_FALSE(RuleMatches(any, ns));
}

TEST(WebhookConfigTest, SelectorsPickNamespacesAndObjects) {
  ValidatingWebhook hook = WebhooksOf(Configuration(GoodHook()))[0];
  hook.namespace_selector = {
      {"matchExpressions",
       {{{"key", "dljob.io/webhook"}, {"operator", "NotIn"}, {"values", {"off"}}}}}};
  hook.object_selector = {{"matchLabels", {{"team", "a"}}}};
  Json mine = {{"metadata", {{"labels", {{"team", "a"}}}}}};
  Json theirs = {{"metadata", {{"labels", {{"team", "b"}}}}}};
  AdmissionAttributes create = Request("CREATE", "dljobs");
  create.object = &mine;
  EXPECT_TRUE(ShouldCallWebhook(hook, create, Json()));
  EXPECT_TRUE(ShouldCallWebhook(hook, create, {{"dljob.io/webhook", "on"}}));
  EXPECT_FALSE(ShouldCallWebhook(hook, create, {{"dljob.io/webhook", "off"}}));
  create.object = &theirs;
  EXPECT_FALSE(ShouldCallWebhook(hook, create, Json()));
  // An update is sent when the old object or the new one is selected.
  AdmissionAttributes update = Request("UPDATE", "dljobs");
  update.object = &theirs;
  update.old_object = &mine;
  EXPECT_TRUE(ShouldCallWebhook(hook, update, Json()));

  // For a Namespace, its own labels; for other cluster-scoped objects no namespace selector.
  hook.object_selector = Json::object();
  hook.rules[0].api_groups = {"*"};
  hook.rules[0].resources = {"*"};
  Json off = {{"metadata", {{"name", "team-a"}, {"labels", {{"dljob.io/webhook", "off"}}}}}};
  AdmissionAttributes ns = Request("CREATE", "namespaces", "", "team-a");
  ns.group = "";
  ns.object = &off;
  hook.rules[0].api_versions = {"*"};
  EXPECT_FALSE(ShouldCallWebhook(hook, ns, Json()));
  AdmissionAttributes cluster = Request("CREATE", "dljobqueues", "", "");
  cluster.object = &off;
  EXPECT_TRUE(ShouldCallWebhook(hook, cluster, Json()));

  AdmissionAttributes own = Request("CREATE", "validatingwebhookconfigurations", "", "");
  own.group = "admissionregistration.k8s.io";
  EXPECT_TRUE(IsExemptFromWebhooks(own));
  EXPECT_FALSE(IsExemptFromWebhooks(create));
}

TEST(WebhookConfigTest, WebhooksOfDecodesTheCaBundle) {
  Json hook = GoodHook();
  hook["clientConfig"]["caBundle"] = Base64Encode("-----BEGIN CERTIFICATE-----\n");
  hook["failurePolicy"] = "Ignore";
  hook["timeoutSeconds"] = 3;
  std::vector<ValidatingWebhook> hooks = WebhooksOf(Configuration(hook));
  ASSERT_EQ(hooks.size(), 1u);
  EXPECT_EQ(hooks[0].ca_bundle, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_TRUE(hooks[0].fail_open);
  EXPECT_EQ(hooks[0].timeout_seconds, 3);
  ASSERT_TRUE(hooks[0].service);
  EXPECT_EQ(hooks[0].service->name, "dljob");
  EXPECT_EQ(hooks[0].service->port, 443);
  EXPECT_EQ(ReviewVersionFor(hooks[0]), "v1");
  hooks[0].admission_review_versions = {"v9", "v1beta1", "v1"};
  EXPECT_EQ(ReviewVersionFor(hooks[0]), "v1beta1");
}

TEST(AdmissionReviewTest, TheRequestCarriesWhatTheRealServerSends) {
  Json old = {{"metadata", {{"name", "mnist"}, {"resourceVersion", "5"}}}};
  Json now = {{"metadata", {{"name", "mnist"}, {"resourceVersion", "5"}}}, {"status", {}}};
  AdmissionAttributes a = Request("UPDATE", "dljobs", "status");
  a.old_object = &old;
  a.object = &now;
  ReviewContext context{
      UserInfoOf({}), false, {{"kind", "UpdateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}};
  Json review = AdmissionReviewRequest(a, context, "u-1", "v1");
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["kind"], "AdmissionReview");
  const Json& r = review["request"];
  EXPECT_EQ(r["uid"], "u-1");
  EXPECT_EQ(r["kind"], (Json{{"group", "dljob.io"}, {"version", "v1alpha1"}, {"kind", "DLJob"}}));
  EXPECT_EQ(r["resource"],
            (Json{{"group", "dljob.io"}, {"version", "v1alpha1"}, {"resource", "dljobs"}}));
  EXPECT_EQ(r["requestKind"], r["kind"]);
  EXPECT_EQ(r["requestResource"], r["resource"]);
  EXPECT_EQ(r["subResource"], "status");
  EXPECT_EQ(r["requestSubResource"], "status");
  EXPECT_EQ(r["name"], "mnist");
  EXPECT_EQ(r["namespace"], "default");
  EXPECT_EQ(r["operation"], "UPDATE");
  EXPECT_EQ(r["userInfo"],
            (Json{{"username", "system:anonymous"}, {"groups", {"system:unauthenticated"}}}));
  EXPECT_EQ(r["object"], now);
  EXPECT_EQ(r["oldObject"], old);
  EXPECT_EQ(r["dryRun"], false);
  EXPECT_EQ(r["options"]["kind"], "UpdateOptions");

  AdmissionAttributes create = Request("CREATE", "dljobs");
  create.object = &now;
  Json created = AdmissionReviewRequest(create, context, "u-2", "v1beta1")["request"];
  EXPECT_TRUE(created["oldObject"].is_null());
  EXPECT_FALSE(created.contains("subResource"));
}

TEST(AdmissionReviewTest, ImpersonationHeadersNameTheUser) {
  EXPECT_EQ(UserInfoOf({{"Impersonate-User", "alice"}}),
            (Json{{"username", "alice"}, {"groups", {"system:authenticated"}}}));
  EXPECT_EQ(UserInfoOf({{"impersonate-user", "system:serviceaccount:dljob-system:dljob"}}),
            (Json{{"username", "system:serviceaccount:dljob-system:dljob"},
                  {"groups",
                   {"system:serviceaccounts", "system:serviceaccounts:dljob-system",
                    "system:authenticated"}}}));
  EXPECT_EQ(
      UserInfoOf({{"Impersonate-User", "bob"},
                  {"Impersonate-Group", "ops"},
                  {"Impersonate-Group", "dev"},
                  {"Impersonate-Uid", "42"}}),
      (Json{
          {"username", "bob"}, {"groups", {"ops", "dev", "system:authenticated"}}, {"uid", "42"}}));
}

Json Answer(const std::string& uid, Json response) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"response", std::move(response)}};
}

WebhookVerdict Read(int status, const std::string& body,
                    const std::string& content_type = "application/json") {
  return ReadWebhookAnswer("validate.dljob.io", "u-1", "v1", status, content_type, body);
}

TEST(AdmissionReviewTest, AllowedAndDeniedAnswers) {
  WebhookVerdict ok = Read(
      200,
      Answer("u-1", {{"uid", "u-1"}, {"allowed", true}, {"warnings", {"gpus rounded"}}}).dump());
  EXPECT_EQ(ok.kind, WebhookVerdict::Kind::kAllowed);
  EXPECT_EQ(ok.warnings, std::vector<std::string>{"gpus rounded"});

  WebhookVerdict denied =
      Read(200, Answer("u-1", {{"uid", "u-1"},
                               {"allowed", false},
                               {"status",
                                {{"code", 403},
                                 {"reason", "Forbidden"},
                                 {"message", "spec.gpus: must be a multiple of 8"}}}})
                    .dump());
  ASSERT_EQ(denied.kind, WebhookVerdict::Kind::kDenied);
  EXPECT_EQ(denied.denial.http, 403);
  EXPECT_EQ(denied.denial.reason, "Forbidden");
  EXPECT_EQ(denied.denial.message,
            "admission webhook \"validate.dljob.io\" denied the request: spec.gpus: must be a "
            "multiple of 8");

  // A refusal's code is at least 400; without a message the reason, else "without explanation".
  WebhookVerdict bare = Read(200, Answer("u-1", {{"uid", "u-1"}, {"allowed", false}}).dump());
  EXPECT_EQ(bare.denial.http, 400);
  EXPECT_EQ(bare.denial.reason, "");
  EXPECT_EQ(bare.denial.message,
            "admission webhook \"validate.dljob.io\" denied the request without explanation");
  WebhookVerdict reason =
      Read(200, Answer("u-1", {{"uid", "u-1"},
                               {"allowed", false},
                               {"status", {{"code", 200}, {"reason", "NotAllowed"}}}})
                    .dump());
  EXPECT_EQ(reason.denial.http, 400);
  EXPECT_EQ(reason.denial.message,
            "admission webhook \"validate.dljob.io\" denied the request: NotAllowed");
}

TEST(AdmissionReviewTest, AnswersTheServerCannotUseAreFailedCalls) {
  struct Case {
    int status;
    std::string content_type;
    std::string body;
    std::string failure;
  };
  const std::vector<Case> cases = {
      {200, "application/json", "garbage",
       "failed to call webhook: couldn't get version/kind; json parse error: invalid character "
       "'g' looking for beginning of value"},
      {200, "application/json", "",
       "failed to call webhook: 0-length response with status code: 200 and content type: "
       "application/json"},
      {200, "text/plain", "ok", "failed to call webhook: serializer for text/plain doesn't exist"},
      {500, "text/plain", "boom\n",
       "failed to call webhook: an error on the server (\"boom\") has prevented the request from "
       "succeeding"},
      {404, "text/plain", "no",
       "failed to call webhook: the server could not find the requested "
       "resource"},
      {200, "application/json", R"({"response": {"uid": "u-1", "allowed": true}})",
       "received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
       "Kind=AdmissionReview, got /, Kind="},
      {200, "application/json", Answer("u-1", nullptr).dump(),
       "received invalid webhook response: webhook response was absent"},
      {200, "application/json", Answer("u-1", {{"uid", "u-2"}, {"allowed", true}}).dump(),
       "received invalid webhook response: expected response.uid=\"u-1\", got \"u-2\""},
      {200, "application/json",
       Answer("u-1", {{"uid", "u-1"}, {"allowed", true}, {"patchType", "JSONPatch"}}).dump(),
       "received invalid webhook response: validating webhook may not return "
       "response.patchType"},
  };
  for (const Case& c : cases) {
    WebhookVerdict v = Read(c.status, c.body, c.content_type);
    EXPECT_EQ(v.kind, WebhookVerdict::Kind::kCallFailed) << c.body;
    EXPECT_EQ(v.failure, c.failure) << c.body;
  }
  Json details;
  ApiError error = CallFailedError("validate.dljob.io", "failed to call webhook: x", &details);
  EXPECT_EQ(error.http, 500);
  EXPECT_EQ(error.reason, "InternalError");
  EXPECT_EQ(error.message,
            "Internal error occurred: failed calling webhook \"validate.dljob.io\": failed to "
            "call webhook: x");
  EXPECT_EQ(details["causes"][0]["message"],
            "failed calling webhook \"validate.dljob.io\": failed to call webhook: x");
}

}  // namespace
}  // namespace dljob::apiserver
