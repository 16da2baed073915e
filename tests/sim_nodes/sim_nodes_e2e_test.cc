// dljob-sim-nodes against dljob-test-apiserver (started without its own simulated kubelets), both
// as child processes on loopback, stopped by PID: nodes registered with their labels and GPUs,
// Leases renewed, bound pods Running and Ready, Succeeded or Failed when annotated, deleted pods
// gone, other nodes' pods left alone, and nodes and leases deleted on SIGTERM.
// tests/sim_nodes/cluster_test.sh does the same against a real kube-apiserver and etcd.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kube/config.h"
#include "kube/http_api.h"
#include "kube/object_fields.h"
#include "testing/command.h"
#include "tests/sim_nodes/sim_node_objects.h"

namespace dljob::sim_nodes {
namespace {

using dljob::testing::Background;
using dljob::testing::BinDir;
using dljob::testing::ReadFile;
using dljob::testing::TempDir;
using dljob::testing::WaitFor;
namespace r = kube::resources;

constexpr int kWaitMs = 30'000;

class SimNodesE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* program : {"dljob-test-apiserver", "dljob-sim-nodes"}) {
      if (::access((BinDir() + "/" + program).c_str(), X_OK) != 0) {
        GTEST_FAIL() << program << " is not built (" << BinDir() << "): run scripts/dev/build.sh";
      }
    }
    kubeconfig_ = dir_.path() + "/kubeconfig";
    const std::string port_file = dir_.path() + "/port";
    server_ = std::make_unique<Background>(
        std::vector<std::string>{BinDir() + "/dljob-test-apiserver", "--port", "0", "--port-file",
                                 port_file, "--kubeconfig-out", kubeconfig_},
        std::map<std::string, std::string>{}, dir_.path() + "/server.out",
        dir_.path() + "/server.err");
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(port_file); }, kWaitMs))
        << "the server did not start: " << ReadFile(dir_.path() + "/server.err");
    Result<kube::Config> config = kube::LoadKubeconfig(kubeconfig_);
    ASSERT_TRUE(config.ok()) << config.status().message();
    Result<std::unique_ptr<kube::Api>> api = kube::MakeApi(*config);
    ASSERT_TRUE(api.ok()) << api.status().message();
    api_ = std::move(api).value();

    const std::string ready = dir_.path() + "/ready";
    sim_ = std::make_unique<Background>(
        std::vector<std::string>{BinDir() + "/dljob-sim-nodes", "--kubeconfig", kubeconfig_,
                                 "--nodes", "3", "--name-prefix", "e2e-node-", "--gpus-per-node",
                                 "4", "--renew-seconds", "1", "--status-seconds", "2",
                                 "--progress-seconds", "1", "--ready-file", ready},
        std::map<std::string, std::string>{}, dir_.path() + "/sim.out", dir_.path() + "/sim.err");
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(ready); }, kWaitMs)) << Logs();
  }

  void TearDown() override {
    for (auto* p : {&sim_, &server_}) {
      if (!*p) continue;
      (*p)->Signal(SIGTERM);
      EXPECT_EQ((*p)->Wait(kWaitMs), 0) << Logs();
      p->reset();  // one that did not stop is killed by PID here
    }
  }

  std::string Logs() {
    return "\n--- dljob-sim-nodes stdout:\n" + ReadFile(dir_.path() + "/sim.out") +
           "--- stderr:\n" + ReadFile(dir_.path() + "/sim.err") +
           "--- dljob-test-apiserver stderr:\n" + ReadFile(dir_.path() + "/server.err");
  }

  Json NewPod(const std::string& name, const std::string& node) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"nodeName", node},
                  {"containers", {{{"name", "main"}, {"image", "dljob/trainer:cpu"}}}}}}};
    kube::ApiResult<Json> made = api_->Create(r::kPods, "default", pod);
    EXPECT_TRUE(made.ok()) << made.status().message();
    return made.ok() ? *made : Json::object();
  }

  std::string Phase(const std::string& name) {
    kube::ApiResult<Json> pod = api_->Get(r::kPods, "default", name);
    if (!pod.ok()) return pod.error().IsNotFound() ? "(gone)" : pod.error().ToString();
    return pod->contains("status") ? (*pod)["status"].value("phase", "") : "";
  }

  bool WaitPhase(const std::string& name, const std::string& phase) {
    return WaitFor([&] { return Phase(name) == phase; }, kWaitMs);
  }

  void Tell(const std::string& name, const std::string& code) {
    kube::ApiResult<Json> patched =
        api_->MergePatch(r::kPods, "default", name,
                         {{"metadata", {{"annotations", {{kExitCodeAnnotation, code}}}}}});
    ASSERT_TRUE(patched.ok()) << patched.status().message();
  }

  TempDir dir_;
  std::string kubeconfig_;
  std::unique_ptr<Background> server_;
  std::unique_ptr<Background> sim_;
  std::unique_ptr<kube::Api> api_;
};

TEST_F(SimNodesE2eTest, NodesPodsLeasesAndDeregistration) {
  kube::ListOptions simulated;
  simulated.label_selector = std::string(kSimulatedLabel) + "=true";
  kube::ApiResult<Json> nodes = api_->List(r::kNodes, "", simulated);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ((*nodes)["items"].size(), 3u);
  for (const Json& node : (*nodes)["items"]) {
    EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "4");
    EXPECT_EQ(node["metadata"]["labels"]["dljob.io/rack"].get<std::string>().rfind("rack-", 0), 0u);
  }

  // The lease of the last node is renewed (every second here).
  auto renew_time = [&] {
    kube::ApiResult<Json> lease = api_->Get(r::kLeases, kLeaseNamespace, "e2e-node-2");
    return lease.ok() ? (*lease)["spec"].value("renewTime", "") : lease.error().ToString();
  };
  const std::string first = renew_time();
  EXPECT_TRUE(WaitFor([&] { return renew_time() != first; }, kWaitMs)) << first << Logs();

  NewPod("ok", "e2e-node-1");
  NewPod("fails", "e2e-node-2");
  NewPod("deleted", "e2e-node-0");
  NewPod("elsewhere", "another-node");
  for (const char* name : {"ok", "fails", "deleted"}) {
    ASSERT_TRUE(WaitPhase(name, "Running")) << name << ": " << Phase(name) << Logs();
  }
  kube::ApiResult<Json> ok = api_->Get(r::kPods, "default", "ok");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["status"]["hostIP"], "127.0.0.1");  // the kubelet endpoint's, every node's
  EXPECT_EQ((*ok)["status"]["podIP"].get<std::string>().rfind("127.64.1.", 0), 0u);
  bool ready = false;
  for (const Json& c : (*ok)["status"]["conditions"]) {
    if (c["type"] == "Ready") ready = c["status"] == "True";
  }
  EXPECT_TRUE(ready) << (*ok)["status"].dump();

  Tell("ok", "0");
  Tell("fails", "3");
  EXPECT_TRUE(WaitPhase("ok", "Succeeded")) << Phase("ok") << Logs();
  EXPECT_TRUE(WaitPhase("fails", "Failed")) << Phase("fails") << Logs();
  kube::ApiResult<Json> failed = api_->Get(r::kPods, "default", "fails");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->at("status")["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);

  kube::DeleteOptions graceful;
  graceful.grace_period_seconds = 30;
  ASSERT_TRUE(api_->Delete(r::kPods, "default", "deleted", graceful).ok());
  EXPECT_TRUE(WaitPhase("deleted", "(gone)")) << Phase("deleted") << Logs();

  EXPECT_EQ(Phase("elsewhere"), "Pending");  // not one of its nodes: left alone

  sim_->Signal(SIGTERM);
  ASSERT_EQ(sim_->Wait(kWaitMs), 0) << Logs();
  sim_.reset();
  nodes = api_->List(r::kNodes, "", simulated);
  ASSERT_TRUE(nodes.ok());
  EXPECT_TRUE((*nodes)["items"].empty()) << (*nodes)["items"].dump();
  EXPECT_TRUE(api_->Get(r::kLeases, kLeaseNamespace, "e2e-node-0").error().IsNotFound());
}

}  // namespace
}  // namespace dljob::sim_nodes
