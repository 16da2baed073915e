// KubeletLogs (kubelet_logs.h) over HTTPS on loopback, as kube-apiserver reaches a kubelet: a pod
// not started is 404 and a container it lacks 400; a started pod's log has its start line, with
// the time first under timestamps=true and only the last lines under tailLines; a followed log
// stays open until its pod finishes, then ends after the exit line; a pod removed ends its
// followers and is 404 after.
#include "tests/sim_nodes/kubelet_logs.h"

#include <future>
#include <regex>

#include <gtest/gtest.h>

#include "http/socket_client.h"

namespace dljob::sim_nodes {
namespace {

using kube::Json;

Json Pod(const std::string& name) {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", name + "-uid"}}},
          {"spec", {{"nodeName", "sim-node-3"}, {"containers", {{{"name", "launcher"}}}}}}};
}

class KubeletLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(logs_.Start().ok());
    http::ClientOptions o;
    o.base_url = "https://127.0.0.1:" + std::to_string(logs_.port());
    o.insecure_skip_tls_verify = true;  // as kube-apiserver without --kubelet-certificate-authority
    auto client = http::SocketClient::Create(o);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
  }

  http::ClientResponse Get(const std::string& target) {
    http::ClientRequest r;
    r.target = target;
    auto answer = client_->Send(r);
    EXPECT_TRUE(answer.ok()) << answer.status().message();
    return answer.ok() ? *answer : http::ClientResponse{};
  }

  // A followed log read to its end on another thread.
  std::future<std::string> Follow(const std::string& target) {
    return std::async(std::launch::async, [this, target] {
      http::ClientRequest r;
      r.target = target;
      auto stream = client_->Open(r);
      if (!stream.ok()) return "open failed: " + stream.status().message();
      std::string all;
      for (;;) {
        auto chunk = stream->body->Read();
        if (!chunk.ok()) return "read failed: " + chunk.status().message();
        if (!*chunk) return all;
        all += **chunk;
      }
    });
  }

  KubeletLogs logs_{0};
  http::ClientPtr client_;
};

TEST_F(KubeletLogsTest, UnknownPodsAndContainersAreRefusedAsAKubeletRefusesThem) {
  EXPECT_EQ(Get("/containerLogs/ns/p/launcher").status, 404);
  logs_.Started(Pod("p"));
  EXPECT_EQ(Get("/containerLogs/ns/p/worker").status, 400);
  EXPECT_EQ(Get("/containerLogs/ns/p").status, 404);
  EXPECT_EQ(Get("/stats/summary").status, 404);
}

TEST_F(KubeletLogsTest, AStartedPodsLogHasItsStartLineWithTimesAndTailsOnRequest) {
  logs_.Started(Pod("p"));
  http::ClientResponse plain = Get("/containerLogs/ns/p/launcher");
  EXPECT_EQ(plain.status, 200);
  EXPECT_EQ(plain.body, "dljob-sim-nodes: started on sim-node-3\n");
  logs_.Finished(Pod("p"), 3);
  std::string stamped = Get("/containerLogs/ns/p/launcher?timestamps=true").body;
  EXPECT_TRUE(std::regex_search(
      stamped, std::regex("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{9}Z dljob-sim-nodes: "
                          "started on sim-node-3\n")))
      << stamped;
  EXPECT_EQ(Get("/containerLogs/ns/p/launcher?tailLines=1").body,
            "dljob-sim-nodes: exited with code 3\n");
}

TEST_F(KubeletLogsTest, AFollowedLogEndsWhenItsPodFinishes) {
  logs_.Started(Pod("p"));
  std::future<std::string> followed = Follow("/containerLogs/ns/p/launcher?follow=true");
  EXPECT_EQ(followed.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  logs_.Finished(Pod("p"), 0);
  ASSERT_EQ(followed.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(followed.get(),
            "dljob-sim-nodes: started on sim-node-3\ndljob-sim-nodes: exited with code 0\n");
}

TEST_F(KubeletLogsTest, ARemovedPodEndsItsFollowersAndIsGone) {
  logs_.Started(Pod("p"));
  std::future<std::string> followed = Follow("/containerLogs/ns/p/launcher?follow=true");
  EXPECT_EQ(followed.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  logs_.Removed(Pod("p"));
  ASSERT_EQ(followed.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(followed.get().rfind("dljob-sim-nodes: started on sim-node-3\n", 0), 0u);
  EXPECT_EQ(Get("/containerLogs/ns/p/launcher").status, 404);
  logs_.Removed(Pod("p"));  // again (the runner's delete, then the watch's DELETED): nothing
}

}  // namespace
}  // namespace dljob::sim_nodes
