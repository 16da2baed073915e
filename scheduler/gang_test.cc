#include "scheduler/gang.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/placement_policy.h"

namespace dljob::scheduler {
namespace {

DLJob Job(int64_t gpus, std::optional<int64_t> per_worker) {
  DLJob job;
  job.metadata.namespace_ = "team";
  job.metadata.name = "resnet";
  job.spec.gpus = gpus;
  job.spec.gpus_per_worker = per_worker;
  return job;
}

TEST(GangOf, WorkersAndTheirResourcesFromTheSpec) {
  DLJob job = Job(16, 8);
  job.spec.resources.cpu_per_gpu = "1500m";
  job.spec.resources.memory_per_gpu = "60Gi";
  job.spec.scheduling.node_selector = {{kGpuProductLabel, "NVIDIA-A100-SXM4-80GB"}};
  job.spec.scheduling.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt}};
  job.spec.scheduling.topology = "Spread";
  job.spec.data = {{"imagenet", "oss://bucket/imagenet", "/data", {}, {}, {}},
                   {"vocab", "nas://srv/export/vocab", "/vocab", {}, {}, {}}};
  Result<Gang> gang = GangOf(job);
  ASSERT_TRUE(gang.ok()) << gang.status().message();
  Gang want;
  want.job = "team/resnet";
  want.workers = 2;
  want.per_worker = {8, 12000, 480 * 1024, 1};
  want.node_selector = job.spec.scheduling.node_selector;
  want.tolerations = job.spec.scheduling.tolerations;
  want.topology = Topology::kSpread;
  want.datasets = {"oss://bucket/imagenet", "nas://srv/export/vocab"};
  want.gpu_model = "NVIDIA-A100-SXM4-80GB";
  EXPECT_EQ(*gang, want);
}

// spec.scheduling.affinity in the API's shape (jobs/dljob_types.h), requiring `terms`.
Affinity RequiredAffinity(std::vector<dljob::NodeSelectorTerm> terms) {
  return Affinity{.node_affinity = NodeAffinity{
                      .required_during_scheduling_ignored_during_execution =
                          dljob::NodeSelector{.node_selector_terms = std::move(terms)}}};
}

TEST(GangOf, RequiredNodeAffinityFromTheSpec) {
  DLJob job = Job(16, 8);
  EXPECT_TRUE(GangOf(job)->required_affinity.empty());
  job.spec.scheduling.affinity = Affinity{};  // set, but requiring nothing
  EXPECT_TRUE(GangOf(job)->required_affinity.empty());
  job.spec.scheduling.affinity = Affinity{.node_affinity = NodeAffinity{}};
  EXPECT_TRUE(GangOf(job)->required_affinity.empty());

  job.spec.scheduling.affinity = RequiredAffinity({
      {.match_expressions = {{"gpu-mem", "Gt", {"40"}}, {"zone", "In", {"z1", "z2"}}}},
      {.match_expressions = {{"dljob.io/big", "Exists", {}}}},
  });
  Result<Gang> gang = GangOf(job);
  ASSERT_TRUE(gang.ok()) << gang.status().message();
  EXPECT_EQ(gang->required_affinity,
            (std::vector<NodeSelectorTerm>{
                {.match_expressions = {{"gpu-mem", "Gt", {"40"}}, {"zone", "In", {"z1", "z2"}}}},
                {.match_expressions = {{"dljob.io/big", "Exists", {}}}}}));
}

// From spec to placement: every policy puts the gang only on nodes its affinity admits, and one
// that admits none is refused with kube-scheduler's reason.
TEST(GangOf, EveryPolicyObeysTheSpecsAffinity) {
  auto node = [](std::string name, std::map<std::string, std::string> labels) {
    Node n;
    n.name = std::move(name);
    n.allocatable = {8, 0, 0, 0};
    n.labels = std::move(labels);
    return n;
  };
  // a and b come first by name (first-fit's order), c is the tightest fit (best-fit's), but only
  // d and e have more than 40 GB per GPU outside zone z3.
  std::vector<Node> nodes = {node("a", {{"gpu-mem", "24"}, {"zone", "z1"}}),
                             node("b", {{"zone", "z1"}}),
                             node("c", {{"gpu-mem", "80"}, {"zone", "z3"}}),
                             node("d", {{"gpu-mem", "80"}, {"zone", "z1"}}),
                             node("e", {{"gpu-mem", "80"}, {"zone", "z2"}})};
  nodes[2].used.gpus = 4;
  DLJob job = Job(16, 8);
  job.spec.scheduling.affinity = RequiredAffinity(
      {{.match_expressions = {{"gpu-mem", "Gt", {"40"}}, {"zone", "NotIn", {"z3"}}}}});
  Result<Gang> gang = GangOf(job);
  ASSERT_TRUE(gang.ok()) << gang.status().message();
  for (std::string_view name : PlacementPolicyNames()) {
    SCOPED_TRACE(name);
    Result<PlacementPolicyPtr> policy = MakePlacementPolicy(name);
    ASSERT_TRUE(policy.ok()) << policy.status().message();
    Result<Placement> placed = (*policy)->Place(*gang, nodes);
    ASSERT_TRUE(placed.ok()) << placed.status().message();
    std::vector<std::string> where = placed->worker_nodes;
    std::sort(where.begin(), where.end());
    EXPECT_EQ(where, (std::vector<std::string>{"d", "e"}));

    Result<Placement> refused = (*policy)->Place(*gang, {nodes[0], nodes[1], nodes[2]});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("node(s) didn't match node affinity"),
              std::string::npos)
        << refused.status().message();
  }
}

TEST(GangOf, DefaultsAndRounding) {
  const struct {
    int64_t gpus;
    std::optional<int64_t> per_worker;
    std::optional<std::string> cpu, memory, topology;
    int64_t workers, gpus_each, cpu_milli, memory_mib;
    Topology topo;
  } cases[] = {
      {16, std::nullopt, {}, {}, {}, 2, 8, 0, 0, Topology::kAny},  // DefaultGpusPerWorker
      {6, std::nullopt, {}, {}, {}, 1, 6, 0, 0, Topology::kAny},
      {4, 1, "0.5", "1G", "Pack", 4, 1, 500, 954, Topology::kPack},  // 10^9 B = 953.7 MiB
      {4, 2, "0.5m", "1", "Pack", 2, 2, 1, 1, Topology::kPack},      // 2 B, rounded up to 1 MiB
  };
  for (const auto& c : cases) {
    DLJob job = Job(c.gpus, c.per_worker);
    job.spec.resources.cpu_per_gpu = c.cpu;
    job.spec.resources.memory_per_gpu = c.memory;
    job.spec.scheduling.topology = c.topology;
    Result<Gang> gang = GangOf(job);
    ASSERT_TRUE(gang.ok()) << c.gpus << ": " << gang.status().message();
    EXPECT_EQ(gang->workers, c.workers) << c.gpus;
    EXPECT_EQ(gang->per_worker, (Resources{c.gpus_each, c.cpu_milli, c.memory_mib, 1})) << c.gpus;
    EXPECT_EQ(gang->topology, c.topo) << c.gpus;
    EXPECT_EQ(gang->gpu_model, "");
  }
}

TEST(GangOf, NamesTheFieldItCannotUse) {
  const struct {
    void (*edit)(DLJob&);
    std::string message;
  } cases[] = {
      {[](DLJob& j) { j.spec.gpus.reset(); }, "spec.gpus: must be a positive number of GPUs"},
      {[](DLJob& j) { j.spec.gpus = 0; }, "spec.gpus: must be a positive number of GPUs"},
      {[](DLJob& j) { j.spec.gpus = 12; },
       "spec.gpus: 12 is not a multiple of spec.gpusPerWorker (8)"},
      {[](DLJob& j) { j.spec.gpus_per_worker = 0; },
       "spec.gpus: 16 is not a multiple of spec.gpusPerWorker (0)"},
      {[](DLJob& j) { j.spec.resources.cpu_per_gpu = "lots"; },
       "spec.resources.cpuPerGpu: not a quantity: \"lots\""},
      {[](DLJob& j) { j.spec.resources.memory_per_gpu = "1e9"; },
       "spec.resources.memoryPerGpu: not a quantity: \"1e9\""},
      {[](DLJob& j) { j.spec.scheduling.topology = "Scatter"; },
       "spec.scheduling.topology: \"Scatter\" is not Pack or Spread"},
  };
  for (const auto& c : cases) {
    DLJob job = Job(16, 8);
    c.edit(job);
    Result<Gang> gang = GangOf(job);
    ASSERT_FALSE(gang.ok()) << c.message;
    EXPECT_EQ(gang.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(gang.status().message(), c.message);
  }
}

}  // namespace
}  // namespace dljob::scheduler
