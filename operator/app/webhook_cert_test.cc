// EnsureWebhookCertificate and InjectCaBundle (webhook_cert.h) against FakeApi: the calls made, in
// order, for the first replica, for one that finds the Secret, for one that loses the race to
// create it, for a Secret that is no longer good enough; the certificate checked by OpenSSL for
// every Service name; and the caBundle written once.
#include "operator/app/webhook_cert.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "kube/testing/fake_api.h"

namespace dljob::op {
namespace {

using kube::Json;
using kube::testing::FakeApi;
using Strings = std::vector<std::string>;

const WallTime kNow = std::chrono::system_clock::from_time_t(1'750'000'000);
const WebhookCertOptions kOptions{"dljob-webhook-cert", "dljob-system", "dljob-webhook",
                                  "cluster.local"};

TEST(WebhookCert, TheFirstReplicaMakesItAndEveryNameVerifies) {
  FakeApi api;
  auto cert = EnsureWebhookCertificate(api, kOptions, kNow);
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_EQ(api.CallStrings(), (Strings{"get secrets dljob-system/dljob-webhook-cert",
                                        "create secrets dljob-system/dljob-webhook-cert"}));
  EXPECT_EQ(WebhookDnsNames(kOptions), (Strings{"dljob-webhook", "dljob-webhook.dljob-system",
                                                "dljob-webhook.dljob-system.svc",
                                                "dljob-webhook.dljob-system.svc.cluster.local"}));
  for (const std::string& name : WebhookDnsNames(kOptions)) {
    Status s = http::VerifyServingCertificate(cert->ca_pem, cert->serving.cert_pem, name, kNow);
    EXPECT_TRUE(s.ok()) << name << ": " << s.message();
  }
  std::optional<Json> secret =
      api.Object(kube::resources::kSecrets, "dljob-system", "dljob-webhook-cert");
  ASSERT_TRUE(secret);
  EXPECT_EQ((*secret)["type"], "kubernetes.io/tls");
  EXPECT_EQ(Base64Decode((*secret)["data"][kTlsKeyKey].get<std::string>()), cert->serving.key_pem);

  // The next replica reads the same certificate and writes nothing.
  api.ClearCalls();
  auto second = EnsureWebhookCertificate(api, kOptions, kNow + std::chrono::hours(1));
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->serving, cert->serving);
  EXPECT_EQ(api.CallStrings(), (Strings{"get secrets dljob-system/dljob-webhook-cert"}));
}

TEST(WebhookCert, AReplicaThatLosesTheRaceServesTheWinnersCertificate) {
  FakeApi api;
  auto winner = EnsureWebhookCertificate(api, kOptions, kNow);
  ASSERT_TRUE(winner.ok());
  api.ClearCalls();
  // This replica read before the winner created the Secret (404), and its own create comes second.
  api.FailNext("get", "secrets", kube::ApiError{404, "NotFound", "not found"});
  api.FailNext("create", "secrets", kube::ApiError{409, "AlreadyExists", "already exists"});
  auto loser = EnsureWebhookCertificate(api, kOptions, kNow);
  ASSERT_TRUE(loser.ok()) << loser.status().message();
  EXPECT_EQ(loser->serving, winner->serving);
  EXPECT_EQ(loser->ca_pem, winner->ca_pem);
  EXPECT_EQ(api.CallStrings(), (Strings{"get secrets dljob-system/dljob-webhook-cert",
                                        "create secrets dljob-system/dljob-webhook-cert",
                                        "get secrets dljob-system/dljob-webhook-cert"}));
}

TEST(WebhookCert, ACertificateAboutToExpireOrForOtherNamesIsReplaced) {
  FakeApi api;
  auto first = EnsureWebhookCertificate(api, kOptions, kNow);
  ASSERT_TRUE(first.ok());
  api.ClearCalls();
  WallTime later = kNow + kServingValidity - kRenewBefore + std::chrono::hours(1);
  auto renewed = EnsureWebhookCertificate(api, kOptions, later);
  ASSERT_TRUE(renewed.ok()) << renewed.status().message();
  EXPECT_NE(renewed->serving, first->serving);
  EXPECT_EQ(api.CallStrings(), (Strings{"get secrets dljob-system/dljob-webhook-cert",
                                        "update secrets dljob-system/dljob-webhook-cert"}));
  EXPECT_TRUE(http::VerifyServingCertificate(renewed->ca_pem, renewed->serving.cert_pem,
                                             "dljob-webhook.dljob-system.svc", later)
                  .ok());

  WebhookCertOptions renamed = kOptions;
  renamed.service_name = "other-webhook";
  api.ClearCalls();
  auto other = EnsureWebhookCertificate(api, renamed, later);
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(api.CallStrings().back(), "update secrets dljob-system/dljob-webhook-cert");
  EXPECT_TRUE(http::VerifyServingCertificate(other->ca_pem, other->serving.cert_pem,
                                             "other-webhook.dljob-system.svc", later)
                  .ok());
}

TEST(WebhookCert, ErrorsNameTheSecret) {
  FakeApi api;
  api.FailNext("get", "secrets", kube::ApiError{403, "Forbidden", "secrets is forbidden"});
  auto r = EnsureWebhookCertificate(api, kOptions, kNow);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reading Secret dljob-system/dljob-webhook-cert"),
            std::string::npos)
      << r.status().message();
}

Json Configuration() {
  Json hook = {
      {"name", "dljobs.dljob.io"},
      {"clientConfig", {{"service", {{"name", "dljob-webhook"}, {"namespace", "dljob-system"}}}}}};
  Json queues = hook;
  queues["name"] = "dlqueues.dljob.io";
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "ValidatingWebhookConfiguration"},
          {"metadata", {{"name", "dljob-validating-webhook"}}},
          {"webhooks", Json::array({hook, queues})}};
}

TEST(WebhookCert, TheCaBundleIsWrittenIntoEveryWebhookOnce) {
  FakeApi api;
  api.Put(kValidatingWebhookConfigurations, Configuration());
  ASSERT_TRUE(InjectCaBundle(api, "dljob-validating-webhook", "CA PEM").ok());
  EXPECT_EQ(api.CallStrings(),
            (Strings{"get validatingwebhookconfigurations dljob-validating-webhook",
                     "update validatingwebhookconfigurations dljob-validating-webhook"}));
  Json stored = *api.Object(kValidatingWebhookConfigurations, "", "dljob-validating-webhook");
  for (const Json& hook : stored["webhooks"]) {
    EXPECT_EQ(hook["clientConfig"]["caBundle"], Base64Encode("CA PEM"));
    EXPECT_EQ(hook["clientConfig"]["service"]["name"], "dljob-webhook");
  }
  api.ClearCalls();
  ASSERT_TRUE(InjectCaBundle(api, "dljob-validating-webhook", "CA PEM").ok());
  EXPECT_EQ(api.CallStrings(),
            (Strings{"get validatingwebhookconfigurations dljob-validating-webhook"}));
  // Someone else changed it between the read and the write: read again.
  api.ClearCalls();
  api.FailNext("update", "validatingwebhookconfigurations",
               kube::ApiError{409, "Conflict", "the object has been modified"});
  ASSERT_TRUE(InjectCaBundle(api, "dljob-validating-webhook", "NEW CA").ok());
  EXPECT_EQ(api.CallStrings().size(), 4u);
  Status missing = InjectCaBundle(api, "absent", "CA PEM");
  EXPECT_NE(missing.message().find("reading ValidatingWebhookConfiguration absent"),
            std::string::npos)
      << missing.message();
}

}  // namespace
}  // namespace dljob::op
