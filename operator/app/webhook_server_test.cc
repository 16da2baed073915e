// The webhook as the API server reaches it: StartWebhook (webhook_server.h) makes its certificate
// through FakeApi, serves HTTPS on loopback, and a client that trusts only the CA from the Secret,
// checking the Service's name, gets AdmissionReviews answered.
#include "operator/app/webhook_server.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/testing/fake_clock.h"
#include "http/socket_client.h"
#include "kube/testing/fake_api.h"
#include "operator/app/admission_review.h"
#include "operator/app/webhook_cert.h"

namespace dljob::op {
namespace {

using nlohmann::json;

TEST(WebhookServer, HttpsRoundTripWithTheCaFromTheSecret) {
  kube::testing::FakeApi api;
  testing::FakeClock clock;
  OperatorOptions options;
  options.metrics_address = "127.0.0.1";
  options.webhook_port = 0;
  auto server = StartWebhook(options, api, clock);
  ASSERT_TRUE(server.ok()) << server.status().message();

  json secret = *api.Object(kube::resources::kSecrets, "dljob-system", "dljob-webhook-cert");
  http::ClientOptions co;
  co.base_url = "https://127.0.0.1:" + std::to_string((*server)->port());
  co.ca_pem = *Base64Decode(secret["data"][kCaCertKey].get<std::string>());
  co.tls_server_name = "dljob-webhook.dljob-system.svc";  // the name the API server calls
  auto client = http::SocketClient::Create(co);
  ASSERT_TRUE(client.ok()) << client.status().message();

  json job = {{"apiVersion", "dljob.io/v1alpha1"},
              {"kind", "DLJob"},
              {"metadata", {{"name", "j"}, {"namespace", "ns"}}},
              {"spec", {{"image", "trainer:1"}, {"command", {"dljob-train"}}, {"gpus", 3}}}};
  json review = {{"apiVersion", "admission.k8s.io/v1"},
                 {"kind", "AdmissionReview"},
                 {"request", {{"uid", "u-1"}, {"operation", "CREATE"}, {"object", job}}}};
  http::ClientRequest req;
  req.method = "POST";
  req.target = kValidateDLJobPath;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = review.dump();
  req.timeout = std::chrono::seconds(10);
  auto allowed = (*client)->Send(req);
  ASSERT_TRUE(allowed.ok()) << allowed.error().message;
  EXPECT_EQ(allowed->status, 200);
  EXPECT_EQ(json::parse(allowed->body)["response"]["allowed"], true) << allowed->body;

  review["request"]["object"]["spec"]["gpus"] = 12;
  review["request"]["object"]["spec"]["gpusPerWorker"] = 8;
  req.body = review.dump();
  auto denied = (*client)->Send(req);
  ASSERT_TRUE(denied.ok()) << denied.error().message;
  json response = json::parse(denied->body)["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["message"].get<std::string>().rfind(
                "DLJob j is not valid (1 problem):\n"
                "spec.gpusPerWorker: must divide spec.gpus (12) into whole workers, got 8 (",
                0),
            0u)
      << denied->body;
}

}  // namespace
}  // namespace dljob::op
