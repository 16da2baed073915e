// sim_node_objects: the nodes, leases and pod status dljob-sim-nodes writes, and the rule that
// decides what its kubelets do to a pod.
#include "tests/sim_nodes/sim_node_objects.h"

#include <set>

#include <gtest/gtest.h>

namespace dljob::sim_nodes {
namespace {

constexpr char kNow[] = "2026-01-02T03:04:05Z";
constexpr char kLater[] = "2026-01-02T03:05:00Z";

Json Pod(const std::string& phase, Json annotations = Json::object()) {
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "w-0"}, {"namespace", "ns"}, {"uid", "u-1"}, {"annotations", annotations}}},
      {"spec",
       {{"nodeName", "sim-node-3"},
        {"containers",
         {{{"name", "main"}, {"image", "img:1"}}, {{"name", "side"}, {"image", "img:2"}}}}}}};
  if (!phase.empty()) pod["status"] = {{"phase", phase}};
  return pod;
}

const Json* Condition(const Json& status, const std::string& type) {
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

TEST(NodeTableTest, NamesAndLabelsFollowKubeUpsTable) {
  NodeTable table;
  table.prefix = "gpu-";
  table.count = 6;
  table.first_index = 4;
  table.gpus = 4;
  table.nodes_per_rack = 2;
  table.nodes_per_clique = 3;
  table.zone = "zone-b";
  Json node = NodeObject(table, 1, kNow);  // number 5
  EXPECT_EQ(node["metadata"]["name"], "gpu-5");
  const Json& labels = node["metadata"]["labels"];
  EXPECT_EQ(labels["kubernetes.io/hostname"], "gpu-5");
  EXPECT_EQ(labels["nvidia.com/gpu.product"], "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(labels["nvidia.com/gpu.count"], "4");
  EXPECT_EQ(labels["nvidia.com/gpu.clique"], "clique-1");  // 5 / 3
  EXPECT_EQ(labels["dljob.io/rack"], "rack-2");            // 5 / 2
  EXPECT_EQ(labels["topology.kubernetes.io/zone"], "zone-b");
  EXPECT_EQ(labels[kSimulatedLabel], "true");
  for (const char* side : {"capacity", "allocatable"}) {
    EXPECT_EQ(node["status"][side]["nvidia.com/gpu"], "4") << side;
    EXPECT_EQ(node["status"][side]["cpu"], "96") << side;
    EXPECT_EQ(node["status"][side]["memory"], "768Gi") << side;
    EXPECT_EQ(node["status"][side]["pods"], "110") << side;
  }
  const Json* ready = Condition(node["status"], "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ((*ready)["status"], "True");
  EXPECT_EQ((*ready)["lastHeartbeatTime"], kNow);
  for (const char* pressure : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
    ASSERT_NE(Condition(node["status"], pressure), nullptr) << pressure;
    EXPECT_EQ((*Condition(node["status"], pressure))["status"], "False") << pressure;
  }
  EXPECT_EQ(node["status"]["addresses"][0],
            Json({{"type", "InternalIP"}, {"address", "127.64.5.1"}}));
  EXPECT_EQ(node["spec"]["podCIDR"], "127.64.5.0/24");
  EXPECT_FALSE(node["metadata"].contains("resourceVersion"));
  EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 0);
}

// With a kubelet endpoint (kubelet_logs.h), every node names it: the API server dials the
// node's InternalIP at that port for pods/log.
TEST(NodeObjectTest, NodesNameTheSharedKubeletEndpoint) {
  NodeTable t;
  t.kubelet_port = 10250;
  Json node = NodeObject(t, 5, kNow);
  EXPECT_EQ(node["status"]["addresses"][0],
            Json({{"type", "InternalIP"}, {"address", "127.0.0.1"}}));
  EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);
  EXPECT_EQ(node["spec"]["podCIDR"], "127.64.5.0/24");  // pods keep their node's subnet
}

TEST(NodeTableTest, EveryNodeOfALargeClusterHasItsOwnSubnetAndEveryPodOfANodeItsOwnIp) {
  std::set<std::string> subnets;
  for (int n = 0; n < 16384; ++n) {
    std::string ip = NodeIp(n);
    ASSERT_EQ(ip.substr(ip.size() - 2), ".1") << n;
    subnets.insert(ip);
  }
  EXPECT_EQ(subnets.size(), 16384u);
  std::set<std::string> pods;
  for (unsigned slot = 0; slot < 253; ++slot) pods.insert(PodIp(999, slot));
  EXPECT_EQ(pods.size(), 253u);
  EXPECT_EQ(pods.count(NodeIp(999)), 0u);
  EXPECT_EQ(PodIp(999, 0), "127.67.231.2");
  EXPECT_EQ(PodIp(999, 252), "127.67.231.254");
  EXPECT_EQ(PodIp(999, 253), PodIp(999, 0));  // wraps, never the node's .1 or .255
}

TEST(NodeTableTest, HeartbeatKeepsTheTransitionTime) {
  Json patch = NodeHeartbeatPatch(kNow, kLater);
  const Json* ready = Condition(patch["status"], "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ((*ready)["lastHeartbeatTime"], kLater);
  EXPECT_EQ((*ready)["lastTransitionTime"], kNow);
  EXPECT_EQ(patch.size(), 1u);  // status only
}

TEST(LeaseTest, OwnedByItsNodeAndRenewedWithMicroTime) {
  Json lease = NodeLease("sim-node-1", "uid-9", 40, "2026-01-02T03:04:05.123456Z");
  EXPECT_EQ(lease["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(lease["metadata"]["namespace"], "kube-node-lease");
  EXPECT_EQ(lease["spec"]["holderIdentity"], "sim-node-1");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 40);
  EXPECT_EQ(lease["metadata"]["ownerReferences"][0]["uid"], "uid-9");
  EXPECT_EQ(lease["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_FALSE(NodeLease("n", "", 40, "t")["metadata"].contains("ownerReferences"));
  EXPECT_EQ(LeaseRenewPatch("t"), Json({{"spec", {{"renewTime", "t"}}}}));
}

// The rule, over every phase × annotation × deletion combination.
TEST(NextPodActionTest, Table) {
  using K = PodAction::Kind;
  struct Case {
    std::string phase;
    std::optional<std::string> annotation;
    bool deleting;
    K want;
    int code = 0;
  };
  const std::vector<Case> cases = {
      {"", std::nullopt, false, K::kStart},
      {"Pending", std::nullopt, false, K::kStart},
      {"Pending", "0", false, K::kStart},  // runs first, finishes on the next turn
      {"Running", std::nullopt, false, K::kNone},
      {"Running", "0", false, K::kFinish, 0},
      {"Running", "3", false, K::kFinish, 3},
      {"Running", "-1", false, K::kFinish, -1},
      {"Running", "", false, K::kNone},
      {"Running", "yes", false, K::kNone},
      {"Running", "0x1", false, K::kNone},
      {"Running", "1 ", false, K::kNone},
      {"Succeeded", "0", false, K::kNone},
      {"Failed", std::nullopt, false, K::kNone},
      {"Unknown", std::nullopt, false, K::kNone},
      {"", std::nullopt, true, K::kRemove},
      {"Pending", std::nullopt, true, K::kRemove},
      {"Running", "0", true, K::kRemove},
      {"Succeeded", std::nullopt, true, K::kRemove},
  };
  for (const Case& c : cases) {
    Json annotations = Json::object();
    if (c.annotation) annotations[kExitCodeAnnotation] = *c.annotation;
    Json pod = Pod(c.phase, annotations);
    if (c.deleting) pod["metadata"]["deletionTimestamp"] = kNow;
    PodAction action = NextPodAction(pod);
    std::string what = "phase '" + c.phase + "' annotation '" + c.annotation.value_or("(none)") +
                       "' deleting " + std::to_string(c.deleting);
    EXPECT_EQ(action.kind, c.want) << what;
    if (c.want == K::kFinish) {
      EXPECT_EQ(action.exit_code, c.code) << what;
    }
  }
}

TEST(NextPodActionTest, ANonStringAnnotationIsNotATellAndNoMetadataIsAStart) {
  Json pod = Pod("Running");
  pod["metadata"]["annotations"] = {{kExitCodeAnnotation, 0}};  // not valid on a server anyway
  EXPECT_EQ(NextPodAction(pod).kind, PodAction::Kind::kNone);
  EXPECT_EQ(NextPodAction(Json::object()).kind, PodAction::Kind::kStart);
}

TEST(PodStatusTest, RunningIsReadyWithTheNodesAddresses) {
  Json patch = RunningStatusPatch(Pod("Pending"), "127.64.3.2", "127.64.3.1", kNow);
  EXPECT_EQ(patch["metadata"], Json({{"uid", "u-1"}}));
  const Json& s = patch["status"];
  EXPECT_EQ(s["phase"], "Running");
  EXPECT_EQ(s["podIP"], "127.64.3.2");
  EXPECT_EQ(s["podIPs"], Json::array({{{"ip", "127.64.3.2"}}}));
  EXPECT_EQ(s["hostIP"], "127.64.3.1");
  EXPECT_EQ(s["startTime"], kNow);
  for (const char* type : {"PodScheduled", "Initialized", "ContainersReady", "Ready"}) {
    ASSERT_NE(Condition(s, type), nullptr) << type;
    EXPECT_EQ((*Condition(s, type))["status"], "True") << type;
  }
  ASSERT_EQ(s["containerStatuses"].size(), 2u);
  for (const Json& c : s["containerStatuses"]) {
    EXPECT_TRUE(c["ready"].get<bool>());
    EXPECT_EQ(c["state"]["running"]["startedAt"], kNow);
  }
  EXPECT_EQ(s["containerStatuses"][1]["image"], "img:2");
}

TEST(PodStatusTest, FinishedKeepsAddressesAndStartTime) {
  Json pod = Pod("Pending");
  pod["status"] = RunningStatusPatch(pod, "127.64.3.2", "127.64.3.1", kNow)["status"];
  for (int code : {0, 2}) {
    Json s = FinishedStatusPatch(pod, code, kLater)["status"];
    EXPECT_EQ(s["phase"], code == 0 ? "Succeeded" : "Failed");
    EXPECT_EQ(s["podIP"], "127.64.3.2");
    EXPECT_EQ(s["hostIP"], "127.64.3.1");
    EXPECT_EQ(s["startTime"], kNow);
    EXPECT_EQ((*Condition(s, "Ready"))["status"], "False");
    for (const Json& c : s["containerStatuses"]) {
      EXPECT_EQ(c["state"]["terminated"]["exitCode"], code);
      EXPECT_EQ(c["state"]["terminated"]["reason"], code == 0 ? "Completed" : "Error");
      EXPECT_FALSE(c["ready"].get<bool>());
    }
  }
}

TEST(PodStatusTest, StoppedTerminatesRunningContainersAndKeepsThePhase) {
  Json pod = Pod("Pending");
  pod["status"] = RunningStatusPatch(pod, "127.64.3.2", "127.64.3.1", kNow)["status"];
  Json patch = StoppedStatusPatch(pod, kLater);
  EXPECT_EQ(patch["metadata"]["uid"], "u-1");
  const Json& s = patch["status"];
  EXPECT_FALSE(s.contains("phase"));
  EXPECT_EQ((*Condition(s, "Ready"))["status"], "False");
  EXPECT_EQ((*Condition(s, "Ready"))["lastTransitionTime"], kLater);
  EXPECT_EQ((*Condition(s, "PodScheduled"))["status"], "True");
  for (const Json& c : s["containerStatuses"]) {
    EXPECT_EQ(c["state"]["terminated"]["exitCode"], 0);
    EXPECT_EQ(c["state"]["terminated"]["startedAt"], kNow);
    EXPECT_EQ(c["state"]["terminated"]["finishedAt"], kLater);
  }
}

}  // namespace
}  // namespace dljob::sim_nodes
