// Validating admission webhooks end to end: the REST layer (in process) calls a webhook served
// over TLS on loopback (http/testing), as a Service's DNS name or a URL, and answers clients as
// the real API server does — allowed, denied, timed out, garbage, a certificate it must not
// trust, a refused connection; failurePolicy both ways; UPDATE and DELETE reviews with their old
// objects; and a webhook that reads and writes the API server while it is being asked.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/base64.h"
#include "base/mutex.h"
#include "http/testing/loopback_http_server.h"
#include "http/testing/test_pki.h"
#include "tests/apiserver/fake_writer.h"
#include "tests/apiserver/rest_handler.h"

namespace dljob::apiserver {
namespace {

using http::testing::LoopbackHttpServer;
using http::testing::ReceivedRequest;
using http::testing::TestCa;
using http::testing::TestCertificate;

constexpr char kService[] = "dljob-webhook.dljob-system.svc";
constexpr char kHook[] = "validate.dljob.io";
constexpr char kJobs[] = "/apis/dljob.io/v1alpha1/namespaces/default/dljobs";
constexpr char kConfigs[] = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

// A webhook on loopback: records every AdmissionReview it is sent and answers with `answer`.
class FakeWebhook {
 public:
  // The answer's body for a review: the whole HTTP response.
  using Answer = std::function<std::string(const Json& review)>;

  explicit FakeWebhook(const TestCertificate& certificate)
      : server_(
            [this](const ReceivedRequest& r, LoopbackHttpServer::Connection& c) { Serve(r, c); },
            certificate) {}

  static std::string Review(const Json& request, Json response) {
    response["uid"] = request["request"]["uid"];
    return LoopbackHttpServer::Answer(200,
                                      Json{{"apiVersion", "admission.k8s.io/v1"},
                                           {"kind", "AdmissionReview"},
                                           {"response", std::move(response)}}
                                          .dump(),
                                      "Content-Type: application/json\r\n");
  }
  static std::string Allow(const Json& request) { return Review(request, {{"allowed", true}}); }

  void SetAnswer(Answer answer) {
    MutexLock lock(mu_);
    answer_ = std::move(answer);
  }
  std::vector<Json> reviews() const {
    MutexLock lock(mu_);
    return reviews_;
  }
  std::vector<std::string> targets() const {
    MutexLock lock(mu_);
    return targets_;
  }
  LoopbackHttpServer& server() { return server_; }

 private:
  void Serve(const ReceivedRequest& request, LoopbackHttpServer::Connection& c) {
    Json review = Json::parse(request.body, nullptr, false);
    Answer answer;
    {
      MutexLock lock(mu_);
      reviews_.push_back(review);
      targets_.push_back(request.target);
      answer = answer_;
    }
    c.Write(answer ? answer(review) : Allow(review));
  }

  mutable Mutex mu_;
  std::vector<Json> reviews_ GUARDED_BY(mu_);
  std::vector<std::string> targets_ GUARDED_BY(mu_);
  Answer answer_ GUARDED_BY(mu_);
  LoopbackHttpServer server_;  // last: serves once the rest is ready
};

Json Job(const std::string& name, int gpus = 1) {
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata", {{"name", name}}},
          {"spec", {{"image", "i"}, {"command", {"c"}}, {"gpus", gpus}}}};
}

class WebhookAdmissionTest : public ::testing::Test {
 protected:
  WebhookAdmissionTest() : webhook_(ca_.Issue({kService}, {"127.0.0.1"})) {
    auto created = RestHandler::Create({});
    EXPECT_TRUE(created.ok()) << created.status().message();
    handler_ = std::move(created).value();
    EXPECT_TRUE(handler_->LoadCrdFile("charts/dljob/crds/dljob.io_dljobs.yaml").ok());
    handler_->services().Set("dljob-system", "dljob-webhook", 443,
                             "127.0.0.1:" + std::to_string(webhook_.server().port()));
  }

  FakeWriter Call(const std::string& method, const std::string& target, const Json& body = nullptr,
                  HttpHeaders headers = {}) {
    if (method == "PATCH") headers.emplace_back("Content-Type", "application/merge-patch+json");
    FakeWriter out;
    handler_->Serve(RequestFor(method, target, body.is_null() ? "" : body.dump(), headers), out);
    return out;
  }

  // A webhook on the DLJobs' `resources` for `operations`, at the fake's Service.
  Json Hook(std::vector<std::string> operations = {"CREATE", "UPDATE"},
            std::vector<std::string> resources = {"dljobs"}) {
    return {{"name", kHook},
            {"admissionReviewVersions", {"v1"}},
            {"sideEffects", "None"},
            {"clientConfig",
             {{"service",
               {{"namespace", "dljob-system"}, {"name", "dljob-webhook"}, {"path", "/validate"}}},
              {"caBundle", Base64Encode(ca_.cert_pem())}}},
            {"rules",
             {{{"operations", operations},
               {"apiGroups", {"dljob.io"}},
               {"apiVersions", {"v1alpha1"}},
               {"resources", resources}}}}};
  }

  void Configure(const Json& hook, const std::string& name = "dljob") {
    Json config = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                   {"kind", "ValidatingWebhookConfiguration"},
                   {"metadata", {{"name", name}}},
                   {"webhooks", Json::array({hook})}};
    FakeWriter out = Call("POST", kConfigs, config);
    ASSERT_EQ(out.status_, 201) << out.body_;
  }

  static std::vector<std::string> Warnings(const FakeWriter& out) {
    std::vector<std::string> warnings;
    for (const auto& [k, v] : out.headers_) {
      if (k == "Warning") warnings.push_back(v);
    }
    return warnings;
  }

  TestCa ca_;
  FakeWebhook webhook_;
  std::unique_ptr<RestHandler> handler_;
};

TEST_F(WebhookAdmissionTest, TheConfigurationKindIsServedWithTheRealDefaults) {
  Configure(Hook());
  FakeWriter got = Call("GET", std::string(kConfigs) + "/dljob");
  ASSERT_EQ(got.status_, 200) << got.body_;
  const Json hook = got.json()["webhooks"][0];
  EXPECT_EQ(hook["failurePolicy"], "Fail");
  EXPECT_EQ(hook["timeoutSeconds"], 10);
  EXPECT_EQ(hook["clientConfig"]["service"]["port"], 443);
  Json bad = Hook();
  bad["name"] = "validate";
  FakeWriter invalid =
      Call("POST", kConfigs, {{"metadata", {{"name", "bad"}}}, {"webhooks", Json::array({bad})}});
  EXPECT_EQ(invalid.status_, 422) << invalid.body_;
  EXPECT_EQ(invalid.json()["message"],
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: "
            "webhooks[0].name: Invalid value: \"validate\": should be a domain with at least "
            "three segments separated by dots");
  FakeWriter discovery = Call("GET", "/apis/admissionregistration.k8s.io/v1");
  EXPECT_NE(discovery.body_.find("\"validatingwebhookconfigurations\""), std::string::npos);
  EXPECT_TRUE(webhook_.reviews().empty());  // configurations themselves are never reviewed
}

TEST_F(WebhookAdmissionTest, AnAllowingWebhookSeesTheCreateAndItsWarningsReachTheClient) {
  Configure(Hook());
  webhook_.SetAnswer([](const Json& review) {
    return FakeWebhook::Review(review, {{"allowed", true}, {"warnings", {"gpus: rounded up"}}});
  });
  FakeWriter created = Call("POST", std::string(kJobs) + "?fieldManager=kubectl", Job("mnist"),
                            {{"Impersonate-User", "alice"}});
  ASSERT_EQ(created.status_, 201) << created.body_;
  EXPECT_EQ(Warnings(created), std::vector<std::string>{"299 - \"gpus: rounded up\""});

  ASSERT_EQ(webhook_.reviews().size(), 1u);
  EXPECT_EQ(webhook_.targets()[0], "/validate?timeout=10s");
  EXPECT_EQ(webhook_.server().handshakes(1)[0].server_name, kService);
  const Json review = webhook_.reviews()[0];
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  const Json& r = review["request"];
  EXPECT_EQ(r["operation"], "CREATE");
  EXPECT_EQ(r["name"], "mnist");
  EXPECT_EQ(r["namespace"], "default");
  EXPECT_EQ(r["resource"]["resource"], "dljobs");
  EXPECT_EQ(r["kind"]["kind"], "DLJob");
  EXPECT_EQ(r["userInfo"]["username"], "alice");
  EXPECT_EQ(r["options"], (Json{{"kind", "CreateOptions"},
                                {"apiVersion", "meta.k8s.io/v1"},
                                {"fieldManager", "kubectl"}}));
  EXPECT_EQ(r["object"]["spec"]["gpus"], 1);
  EXPECT_FALSE(r["object"]["metadata"]["uid"].get<std::string>().empty());
  EXPECT_TRUE(r["oldObject"].is_null());

  // Only what the rules name is sent.
  FakeWriter cm = Call("POST", "/api/v1/namespaces/default/configmaps",
                       {{"metadata", {{"name", "c"}}}, {"data", {{"a", "b"}}}});
  EXPECT_EQ(cm.status_, 201) << cm.body_;
  EXPECT_EQ(Call("DELETE", std::string(kJobs) + "/mnist").status_, 200);
  EXPECT_EQ(webhook_.reviews().size(), 1u);
}

TEST_F(WebhookAdmissionTest, ADenialIsTheRealServersRefusalAndNothingIsStored) {
  Configure(Hook());
  webhook_.SetAnswer([](const Json& review) {
    return FakeWebhook::Review(
        review,
        {{"allowed", false},
         {"status", {{"code", 403}, {"reason", "Forbidden"}, {"message", "spec.gpus: too many"}}}});
  });
  FakeWriter refused = Call("POST", kJobs, Job("greedy", 64));
  EXPECT_EQ(refused.status_, 403) << refused.body_;
  EXPECT_EQ(refused.json()["reason"], "Forbidden");
  EXPECT_EQ(refused.json()["message"],
            "admission webhook \"validate.dljob.io\" denied the request: spec.gpus: too many");
  EXPECT_EQ(Call("GET", std::string(kJobs) + "/greedy").status_, 404);

  // Built-in validation comes first: an invalid object never reaches the webhook.
  Json invalid = Job("invalid");
  invalid["spec"]["gpus"] = -1;
  EXPECT_EQ(Call("POST", kJobs, invalid).status_, 422);
  EXPECT_EQ(webhook_.reviews().size(), 1u);
}

TEST_F(WebhookAdmissionTest, UpdatesAndStatusWritesCarryTheOldObject) {
  Configure(Hook({"CREATE", "UPDATE"}, {"dljobs", "dljobs/status"}));
  ASSERT_EQ(Call("POST", kJobs, Job("mnist", 1)).status_, 201);
  FakeWriter patched = Call("PATCH", std::string(kJobs) + "/mnist", {{"spec", {{"gpus", 2}}}});
  ASSERT_EQ(patched.status_, 200) << patched.body_;
  FakeWriter status = Call("PUT", std::string(kJobs) + "/mnist/status", [&] {
    Json j = patched.json();
    j["status"] = {{"phase", "Running"}};
    return j;
  }());
  ASSERT_EQ(status.status_, 200) << status.body_;

  std::vector<Json> reviews = webhook_.reviews();
  ASSERT_EQ(reviews.size(), 3u);
  const Json& update = reviews[1]["request"];
  EXPECT_EQ(update["operation"], "UPDATE");
  EXPECT_EQ(update["options"]["kind"], "UpdateOptions");
  EXPECT_EQ(update["oldObject"]["spec"]["gpus"], 1);
  EXPECT_EQ(update["object"]["spec"]["gpus"], 2);
  EXPECT_EQ(update["object"]["metadata"]["resourceVersion"],
            update["oldObject"]["metadata"]["resourceVersion"]);
  const Json& status_update = reviews[2]["request"];
  EXPECT_EQ(status_update["subResource"], "status");
  EXPECT_EQ(status_update["object"]["status"]["phase"], "Running");
  EXPECT_FALSE(status_update["oldObject"].contains("status"));
}

TEST_F(WebhookAdmissionTest, DeletesAreReviewedWhenTheRulesSaySo) {
  Configure(Hook({"DELETE"}));
  ASSERT_EQ(Call("POST", kJobs, Job("keep")).status_, 201);
  EXPECT_TRUE(webhook_.reviews().empty());
  webhook_.SetAnswer([](const Json& review) {
    return FakeWebhook::Review(review,
                               {{"allowed", false}, {"status", {{"message", "jobs are kept"}}}});
  });
  FakeWriter refused = Call("DELETE", std::string(kJobs) + "/keep?propagationPolicy=Foreground");
  EXPECT_EQ(refused.status_, 400) << refused.body_;
  EXPECT_FALSE(refused.json().contains("reason"));
  EXPECT_EQ(refused.json()["message"],
            "admission webhook \"validate.dljob.io\" denied the request: jobs are kept");
  EXPECT_EQ(Call("GET", std::string(kJobs) + "/keep").status_, 200);
  ASSERT_EQ(webhook_.reviews().size(), 1u);
  const Json r = webhook_.reviews()[0]["request"];
  EXPECT_EQ(r["operation"], "DELETE");
  EXPECT_TRUE(r["object"].is_null());
  EXPECT_EQ(r["oldObject"]["metadata"]["name"], "keep");
  EXPECT_EQ(r["options"], (Json{{"kind", "DeleteOptions"},
                                {"apiVersion", "meta.k8s.io/v1"},
                                {"propagationPolicy", "Foreground"}}));
}

TEST_F(WebhookAdmissionTest, FailurePolicyDecidesWhatAFailedCallDoes) {
  webhook_.SetAnswer([](const Json&) {
    return LoopbackHttpServer::Answer(200, "garbage", "Content-Type: application/json\r\n");
  });
  Configure(Hook());
  FakeWriter failed = Call("POST", kJobs, Job("closed"));
  EXPECT_EQ(failed.status_, 500) << failed.body_;
  EXPECT_EQ(failed.json()["reason"], "InternalError");
  EXPECT_EQ(failed.json()["message"],
            "Internal error occurred: failed calling webhook \"validate.dljob.io\": failed to "
            "call webhook: couldn't get version/kind; json parse error: invalid character 'g' "
            "looking for beginning of value");
  EXPECT_EQ(failed.json()["details"]["causes"][0]["message"],
            "failed calling webhook \"validate.dljob.io\": failed to call webhook: couldn't get "
            "version/kind; json parse error: invalid character 'g' looking for beginning of "
            "value");

  Json ignore = Hook();
  ignore["failurePolicy"] = "Ignore";
  ASSERT_EQ(Call("PUT", std::string(kConfigs) + "/dljob",
                 {{"metadata", {{"name", "dljob"}}}, {"webhooks", Json::array({ignore})}})
                .status_,
            200);
  EXPECT_EQ(Call("POST", kJobs, Job("open")).status_, 201);
}

TEST_F(WebhookAdmissionTest, ASlowWebhookTimesOutWithTheRealMessage) {
  Json hook = Hook();
  hook["timeoutSeconds"] = 1;
  Configure(hook);
  webhook_.SetAnswer([this](const Json& review) {
    webhook_.server().WaitForStep(1);  // until the test has seen the timeout
    return FakeWebhook::Allow(review);
  });
  FakeWriter slow = Call("POST", kJobs, Job("slow"));
  webhook_.server().Step();
  EXPECT_EQ(slow.status_, 500) << slow.body_;
  EXPECT_EQ(
      slow.json()["message"],
      "Internal error occurred: failed calling webhook \"validate.dljob.io\": failed to "
      "call webhook: Post \"https://dljob-webhook.dljob-system.svc:443/validate?timeout=1s\": "
      "context deadline exceeded");
  EXPECT_EQ(webhook_.targets().at(0), "/validate?timeout=1s");
}

TEST_F(WebhookAdmissionTest, OnlyTheCaBundleIsTrustedAndOnlyForTheServiceName) {
  TestCa other;
  Json hook = Hook();
  hook["clientConfig"]["caBundle"] = Base64Encode(other.cert_pem());
  Configure(hook);
  FakeWriter untrusted = Call("POST", kJobs, Job("a"));
  EXPECT_EQ(untrusted.status_, 500) << untrusted.body_;
  EXPECT_NE(untrusted.json()["message"].get<std::string>().find(
                "failed to call webhook: Post "
                "\"https://dljob-webhook.dljob-system.svc:443/validate?timeout=10s\": tls: failed "
                "to verify certificate"),
            std::string::npos)
      << untrusted.body_;
  EXPECT_TRUE(webhook_.reviews().empty());

  // The right CA, but a Service whose name the certificate does not hold.
  handler_->services().Set("dljob-system", "elsewhere", 443,
                           "127.0.0.1:" + std::to_string(webhook_.server().port()));
  hook["clientConfig"]["caBundle"] = Base64Encode(ca_.cert_pem());
  hook["clientConfig"]["service"]["name"] = "elsewhere";
  ASSERT_EQ(Call("PUT", std::string(kConfigs) + "/dljob",
                 {{"metadata", {{"name", "dljob"}}}, {"webhooks", Json::array({hook})}})
                .status_,
            200);
  FakeWriter misnamed = Call("POST", kJobs, Job("b"));
  EXPECT_EQ(misnamed.status_, 500) << misnamed.body_;
  EXPECT_NE(misnamed.body_.find("tls: failed to verify certificate"), std::string::npos);
  EXPECT_TRUE(webhook_.reviews().empty());
  EXPECT_EQ(Call("GET", std::string(kJobs) + "/b").status_, 404);
}

TEST_F(WebhookAdmissionTest, AUrlWebhookAndARefusedConnection) {
  Json hook = Hook();
  hook["clientConfig"] = {{"url", webhook_.server().url() + "/check"},
                          {"caBundle", Base64Encode(ca_.cert_pem())}};
  Configure(hook);
  EXPECT_EQ(Call("POST", kJobs, Job("by-url")).status_, 201);
  ASSERT_EQ(webhook_.targets().size(), 1u);
  EXPECT_EQ(webhook_.targets()[0], "/check?timeout=10s");

  int closed_port = 0;
  {
    LoopbackHttpServer gone([](const ReceivedRequest&, LoopbackHttpServer::Connection&) {});
    closed_port = gone.port();
  }
  handler_->services().Set("dljob-system", "dljob-webhook", 0,
                           "127.0.0.1:" + std::to_string(closed_port));
  ASSERT_EQ(Call("PUT", std::string(kConfigs) + "/dljob",
                 {{"metadata", {{"name", "dljob"}}}, {"webhooks", Json::array({Hook()})}})
                .status_,
            200);
  handler_->services().Set("dljob-system", "dljob-webhook", 443, "");  // the port-0 route now
  FakeWriter refused = Call("POST", kJobs, Job("nowhere"));
  EXPECT_EQ(refused.status_, 500) << refused.body_;
  EXPECT_EQ(
      refused.json()["message"],
      "Internal error occurred: failed calling webhook \"validate.dljob.io\": failed to "
      "call webhook: Post \"https://dljob-webhook.dljob-system.svc:443/validate?timeout=10s\": "
      "dial tcp 127.0.0.1:" +
          std::to_string(closed_port) + ": connect: connection refused");
}

TEST_F(WebhookAdmissionTest, SelectorsLeaveOutNamespacesAndObjects) {
  Json hook = Hook();
  hook["namespaceSelector"] = {
      {"matchExpressions",
       {{{"key", "dljob.io/webhook"}, {"operator", "NotIn"}, {"values", {"off"}}}}}};
  hook["objectSelector"] = {
      {"matchExpressions", {{{"key", "skip"}, {"operator", "DoesNotExist"}}}}};
  Configure(hook);
  ASSERT_EQ(Call("POST", "/api/v1/namespaces",
                 {{"metadata", {{"name", "quiet"}, {"labels", {{"dljob.io/webhook", "off"}}}}}})
                .status_,
            201);
  EXPECT_EQ(Call("POST", "/apis/dljob.io/v1alpha1/namespaces/quiet/dljobs", Job("a")).status_, 201);
  Json skipped = Job("b");
  skipped["metadata"]["labels"] = {{"skip", "yes"}};
  EXPECT_EQ(Call("POST", kJobs, skipped).status_, 201);
  EXPECT_TRUE(webhook_.reviews().empty());
  EXPECT_EQ(Call("POST", kJobs, Job("c")).status_, 201);
  EXPECT_EQ(webhook_.reviews().size(), 1u);
}

TEST_F(WebhookAdmissionTest, TheWebhookMayUseTheServerAndAChangeMeanwhileIsAConflict) {
  Configure(Hook());
  ASSERT_EQ(Call("POST", kJobs, Job("raced")).status_, 201);
  // While it is asked about an update, the webhook reads the job and another client changes it.
  std::atomic<int> writes{0};
  std::atomic<int> round{1};
  webhook_.SetAnswer([&](const Json& review) {
    FakeWriter read = Call("GET", std::string(kJobs) + "/raced");
    EXPECT_EQ(read.status_, 200);
    if (writes++ == 0) {
      Json touch = {{"metadata", {{"labels", {{"touched", std::to_string(round.load())}}}}}};
      EXPECT_EQ(Call("PATCH", std::string(kJobs) + "/raced", touch).status_, 200);
    }
    return FakeWebhook::Allow(review);
  });
  // A write at the version it read: 409, as on the real server.
  Json stale = Call("GET", std::string(kJobs) + "/raced").json();
  stale["spec"]["gpus"] = 4;
  FakeWriter conflict = Call("PUT", std::string(kJobs) + "/raced", stale);
  EXPECT_EQ(conflict.status_, 409) << conflict.body_;
  EXPECT_EQ(conflict.json()["reason"], "Conflict");

  // An unconditional patch starts again from the new object: reviewed twice, both changes kept.
  writes = 0;
  round = 2;
  size_t before = webhook_.reviews().size();
  FakeWriter patched = Call("PATCH", std::string(kJobs) + "/raced", {{"spec", {{"gpus", 8}}}});
  ASSERT_EQ(patched.status_, 200) << patched.body_;
  EXPECT_EQ(patched.json()["spec"]["gpus"], 8);
  EXPECT_EQ(patched.json()["metadata"]["labels"]["touched"], "2");
  // The patch, the webhook's own patch (reviewed too), then the patch again.
  EXPECT_EQ(webhook_.reviews().size() - before, 3u);
}

}  // namespace
}  // namespace dljob::apiserver
