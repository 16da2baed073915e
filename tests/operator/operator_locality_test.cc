// dljob-operator end to end against dljob-test-apiserver (several nodes): required node affinity
// and data locality. A job pinned by spec.scheduling.affinity runs only where its affinity admits,
// and its worker pods carry the affinity (one that no node matches waits and says why on both
// servers: shared_operator_test.cc); once its worker runs (its cache init container done), the node
// is annotated with the dataset; a later job reading the same dataset, on a cluster where every
// node fits it alike, is placed on that node, while a job reading another dataset goes where it
// would anyway.
#include <gtest/gtest.h>

#include "kube/api.h"
#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kNodes;

constexpr char kCachedDatasets[] = "dljob.io/cached-datasets";

// An 8-GPU job (one worker) reading `source` through a LocalSSD cache.
Json CachedJob(const std::string& name, const std::string& source) {
  Json job = NewJob(name, 8, 8);
  job["spec"]["data"] = Json::array({{{"name", "train"},
                                      {"source", source},
                                      {"mountPath", "/data/train"},
                                      {"cache", {{"medium", "LocalSSD"}, {"path", "/mnt/ssd"}}}}});
  return job;
}

// spec.scheduling.affinity requiring kubernetes.io/hostname In [node].
Json OnNode(const std::string& node) {
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms",
               Json::array({{{"matchExpressions", Json::array({{{"key", "kubernetes.io/hostname"},
                                                                {"operator", "In"},
                                                                {"values", {node}}}})}}})}}}}}};
}

// The node of the job's worker 0 ("" while it has none).
std::string WorkerNode(kube::Api& api, const std::string& job) {
  for (const Json& p : PodsNow(api, job)) {
    if (Role(p) == "worker") return NodeNameOf(p);
  }
  return "";
}

bool WorkersGone(kube::Api& api, const std::string& job) {
  std::optional<std::vector<Json>> pods = JobPods(api, job);
  if (!pods) return false;
  for (const Json& p : *pods) {
    if (Role(p) == "worker") return false;
  }
  return true;
}

// The node's dljob.io/cached-datasets annotation ("" when absent or unreadable).
std::string CachedDatasets(kube::Api& api, const std::string& node) {
  kube::ApiResult<Json> n = api.Get(kNodes, "", node);
  if (!n.ok()) return "";
  return (*n)["metadata"].value("annotations", Json::object()).value(kCachedDatasets, "");
}

class LocalityTest : public OperatorE2eTest {
 protected:
  // Runs `job` to Running, then finishes it and waits for its GPUs to be free again (its workers
  // gone); returns the node its worker ran on.
  std::string RunToCompletion(const Json& job) {
    const std::string name = job["metadata"]["name"];
    EXPECT_TRUE(api().Create(kDLJobs, Ns(), job).ok());
    EXPECT_TRUE(WaitForPhase(api(), name, "Running", kWait)) << Describe(api(), name);
    std::string node = WorkerNode(api(), name);
    EXPECT_TRUE(Finish(control(), name + "-launcher", 0).ok());
    EXPECT_TRUE(WaitForPhase(api(), name, "Succeeded", kWait)) << Describe(api(), name);
    EXPECT_TRUE(WaitFor([&] { return WorkersGone(api(), name); }, kWait)) << Describe(api(), name);
    return node;
  }
};

TEST_F(LocalityTest, TheNodeThatWarmedADatasetGetsTheNextJobThatReadsIt) {
  // Three alike 8-GPU nodes: with nothing else to choose by, the dljob policy takes the first by
  // name, gpu-node-0. The first job is pinned to gpu-node-2 by its affinity.
  StartCluster({.nodes = 3, .gpus_per_node = 8, .kubelet_delay_ms = 0});
  StartOperator();
  const std::string imagenet = "nas://nas.example.com/export/imagenet";
  Json pinned = CachedJob("warm-up", imagenet);
  pinned["spec"]["scheduling"]["affinity"] = OnNode("gpu-node-2");
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), pinned).ok());
  ASSERT_TRUE(WaitForPhase(api(), "warm-up", "Running", kWait)) << Describe(api(), "warm-up");
  EXPECT_EQ(WorkerNode(api(), "warm-up"), "gpu-node-2");
  // The worker pod carries the affinity, as the job wrote it, and names what its cache copies.
  std::optional<std::vector<Json>> pods = JobPods(api(), "warm-up");
  ASSERT_TRUE(pods);
  for (const Json& p : *pods) {
    if (Role(p) != "worker") continue;
    EXPECT_EQ(p["spec"]["affinity"], pinned["spec"]["scheduling"]["affinity"]) << p.dump();
    EXPECT_EQ(Json::parse(p["metadata"]["annotations"].value("dljob.io/cache-sources", "{}")),
              (Json{{"cache-train", imagenet}}));
  }
  // Running means its cache init container completed: the node records the dataset.
  ASSERT_TRUE(WaitFor([&] { return CachedDatasets(api(), "gpu-node-2") != ""; }, kWait))
      << Describe(api(), "warm-up");
  EXPECT_EQ(Json::parse(CachedDatasets(api(), "gpu-node-2")), Json::array({imagenet}));
  EXPECT_EQ(CachedDatasets(api(), "gpu-node-0"), "");
  ASSERT_TRUE(Finish(control(), "warm-up-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "warm-up", "Succeeded", kWait));
  ASSERT_TRUE(WaitFor([&] { return WorkersGone(api(), "warm-up"); }, kWait))
      << Describe(api(), "warm-up");

  // Every node is free and alike again. A job reading another dataset goes where it would have
  // anyway (and warms that dataset there) ...
  EXPECT_EQ(RunToCompletion(CachedJob("cold", "nas://nas.example.com/export/coco")), "gpu-node-0");
  EXPECT_EQ(Json::parse(CachedDatasets(api(), "gpu-node-0")),
            Json::array({"nas://nas.example.com/export/coco"}));
  // ... and one reading ImageNet, with no affinity, goes to the node that holds its cache.
  EXPECT_EQ(RunToCompletion(CachedJob("warm", imagenet)), "gpu-node-2");
  EXPECT_EQ(Json::parse(CachedDatasets(api(), "gpu-node-2")), Json::array({imagenet}));
}

}  // namespace
}  // namespace dljob::testing
