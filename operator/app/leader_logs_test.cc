// A standby's way to the leader's archive (leader_logs.h): the Lease's holder, its pod's IP, one
// GET there with the caller's token, and the endpoint passing the leader's answer back.
#include "operator/app/leader_logs.h"

#include <gtest/gtest.h>

#include "http/testing/fake_client.h"
#include "kube/testing/fake_api.h"

namespace dljob::op {
namespace {

using http::testing::FakeAnswer;
using http::testing::FakeClient;
using http::testing::FakeClientState;
using kube::Json;
using kube::testing::FakeApi;

class LeaderLogsTest : public ::testing::Test {
 protected:
  void PutLease(const std::string& holder) {
    fake_.Put(kube::resources::kLeases,
              {{"metadata", {{"name", "dljob-operator"}, {"namespace", "dljob-system"}}},
               {"spec", holder.empty() ? Json::object() : Json{{"holderIdentity", holder}}}});
  }
  void PutPod(const std::string& name, const std::string& ip) {
    Json pod = {{"metadata", {{"name", name}, {"namespace", "dljob-system"}}}};
    if (!ip.empty()) pod["status"]["podIP"] = ip;
    fake_.Put(kube::resources::kPods, pod);
  }
  ClientFactory Clients() {
    return [this](const std::string& url) -> Result<std::unique_ptr<http::Client>> {
      urls_.push_back(url);
      return std::unique_ptr<http::Client>(new FakeClient(http_));
    };
  }

  FakeApi fake_;
  FakeClientState http_;
  std::vector<std::string> urls_;
  const LeaderAddress where_{"dljob-system", "dljob-operator", "op-b", 8080};
};

TEST_F(LeaderLogsTest, AsksTheLeadersPodWithTheCallersTokenMarkedAsPassedOn) {
  PutLease("op-a");
  PutPod("op-a", "10.1.0.7");
  FakeAnswer archived = http::testing::OkAnswer("[rank 0] hello\n");
  archived.headers = {{"Content-Type", "text/plain; charset=utf-8"}};
  http_.answers.push_back(archived);
  Result<EndpointAnswer> a = AskLeader(fake_, where_, Clients(), "/logs/a/resnet", "alice");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "[rank 0] hello\n");
  EXPECT_EQ(urls_, std::vector<std::string>{"http://10.1.0.7:8080"});
  ASSERT_EQ(http_.requests.size(), 1u);
  EXPECT_EQ(http_.requests[0].target, "/logs/a/resnet");
  EXPECT_EQ(http::HeaderValue(http_.requests[0].headers, "Authorization"), "Bearer alice");
  EXPECT_EQ(http::HeaderValue(http_.requests[0].headers, kForwardedHeader), "1");
}

TEST_F(LeaderLogsTest, TheLeadersRefusalIsPassedBackAsItIs) {
  PutLease("op-a");
  PutPod("op-a", "fd00::7");
  FakeAnswer refused;
  refused.status = 403;
  refused.chunks = {"Forbidden: User \"bob\" cannot get pods/log\n"};
  http_.answers.push_back(refused);
  Result<EndpointAnswer> a = AskLeader(fake_, where_, Clients(), "/logs/a/resnet", "bob");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->status, 403);
  EXPECT_EQ(urls_, std::vector<std::string>{"http://[fd00::7]:8080"});
}

TEST_F(LeaderLogsTest, NoOtherLeaderIsNotFoundAndAnUnreachableOneUnavailable) {
  EXPECT_EQ(LeaderUrl(fake_, where_).status().code(), StatusCode::kNotFound) << "no Lease";
  PutLease("");
  EXPECT_EQ(LeaderUrl(fake_, where_).status().code(), StatusCode::kNotFound) << "no holder";
  PutLease("op-b");
  EXPECT_EQ(LeaderUrl(fake_, where_).status().code(), StatusCode::kNotFound) << "this replica";
  PutLease("laptop_4242");
  EXPECT_EQ(LeaderUrl(fake_, where_).status().code(), StatusCode::kNotFound) << "not a pod";
  PutLease("op-a");
  PutPod("op-a", "");
  EXPECT_EQ(LeaderUrl(fake_, where_).status().code(), StatusCode::kUnavailable) << "no IP";
  PutPod("op-a", "10.1.0.7");
  http_.answers.push_back(http::testing::FailedAnswer(http::Failure::kConnectFailed));
  Result<EndpointAnswer> a = AskLeader(fake_, where_, Clients(), "/logs/a/resnet", "alice");
  EXPECT_EQ(a.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dljob::op
