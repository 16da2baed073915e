#include "cli/node_report.h"

#include <gtest/gtest.h>

#include "jobs/codec.h"

namespace dljob {
namespace {

using Json = nlohmann::json;

struct NodeArgs {
  std::string name;
  int gpus = 8;
  std::string product = "A100";
  std::string clique;
  bool cordoned = false;
  bool ready = true;
  Json taints = Json::array();
};

Json Node(const NodeArgs& a) {
  Json labels = Json::object();
  if (!a.product.empty()) labels["nvidia.com/gpu.product"] = a.product;
  if (!a.clique.empty()) labels["nvidia.com/gpu.clique"] = a.clique;
  labels["topology.kubernetes.io/zone"] = "z1";
  labels["dljob.io/rack"] = "r" + a.name.substr(a.name.size() - 1);
  return {{"metadata", {{"name", a.name}, {"labels", labels}}},
          {"spec", {{"unschedulable", a.cordoned}, {"taints", a.taints}}},
          {"status",
           {{"allocatable",
             {{"nvidia.com/gpu", std::to_string(a.gpus)},
              {"cpu", "96"},
              {"memory", "1024Gi"},
              {"pods", "110"}}},
            {"conditions",
             Json::array({{{"type", "Ready"}, {"status", a.ready ? "True" : "False"}}})}}}};
}

// A pod bound to `node` asking `gpus` as requests (or, with `as_limit`, as a limit only).
Json Pod(const std::string& node, int gpus, bool as_limit = false) {
  Json resources = {{"requests", {{"cpu", "4"}, {"memory", "64Gi"}}}};
  if (as_limit) {
    resources["limits"] = {{"nvidia.com/gpu", gpus}};
  } else {
    resources["requests"]["nvidia.com/gpu"] = std::to_string(gpus);
  }
  return {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
          {"spec",
           {{"nodeName", node},
            {"containers", Json::array({{{"name", "c"}, {"resources", resources}}})}}},
          {"status", {{"phase", "Running"}}}};
}

// A node without the GPU product label.
Json Unlabelled(const std::string& name, int gpus) {
  NodeArgs a;
  a.name = name;
  a.gpus = gpus;
  a.product = "";
  return Node(a);
}

const Json kNoSchedule =
    Json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}});

TEST(BuildNodeReport, CountsPodsPerNodeAndSummarisesPerProduct) {
  std::vector<Json> nodes = {
      Node({.name = "h-1", .product = "H100", .clique = "c9"}),
      Node({.name = "a-1", .clique = "c1", .taints = kNoSchedule}),
      Node({.name = "a-2", .clique = "c1", .cordoned = true}),
      Node({.name = "a-3", .clique = "c2"}),
      Unlabelled("cpu-1", 0),
  };
  std::vector<Json> pods = {Pod("a-1", 6),   Pod("a-1", 1, /*as_limit=*/true),
                            Pod("a-3", 8),   Pod("h-1", 2),
                            Pod("cpu-1", 0), Pod("gone-node", 8)};
  NodeReport r = BuildNodeReport(nodes, pods);

  ASSERT_EQ(r.nodes.size(), 5u);
  const NodeRow& a1 = r.nodes[0];
  EXPECT_EQ(a1.name, "a-1");
  EXPECT_EQ(a1.allocatable, (scheduler::Resources{8, 96000, 1048576, 110}));
  EXPECT_EQ(a1.requested, (scheduler::Resources{7, 8000, 131072, 2}));
  EXPECT_EQ(a1.FreeGpus(), 1);
  EXPECT_EQ(a1.gpu_product, "A100");
  EXPECT_EQ(a1.clique, "c1");
  EXPECT_EQ(a1.zone, "z1");
  EXPECT_EQ(a1.rack, "r1");
  EXPECT_EQ(a1.Schedulable(), "yes (tainted)");
  EXPECT_EQ(r.nodes[1].Schedulable(), "cordoned");
  EXPECT_EQ(r.nodes[2].FreeGpus(), 0);
  EXPECT_EQ(r.nodes[3].name, "cpu-1");
  EXPECT_EQ(r.nodes[3].requested.pods, 1);

  ASSERT_EQ(r.products.size(), 2u);
  const ProductSummary& a100 = r.products[0];
  EXPECT_EQ(a100.gpu_product, "A100");
  EXPECT_EQ(a100.nodes, 3);
  EXPECT_EQ(a100.gpus, 24);
  EXPECT_EQ(a100.allocated, 15);
  EXPECT_EQ(a100.free, 1);  // a-2's 8 are on a cordoned node
  EXPECT_EQ(a100.largest_free, 1);
  EXPECT_EQ(a100.largest_free_node, "a-1");
  const ProductSummary& h100 = r.products[1];
  EXPECT_EQ(h100.gpu_product, "H100");
  EXPECT_EQ(h100.free, 6);
  EXPECT_EQ(h100.largest_free_node, "h-1");
  EXPECT_EQ(r.total.nodes, 5);
  EXPECT_EQ(r.total.gpus, 32);
  EXPECT_EQ(r.total.allocated, 17);
  EXPECT_EQ(r.total.free, 7);
  EXPECT_EQ(r.total.largest_free, 6);
  EXPECT_EQ(r.total.largest_free_node, "h-1");
  EXPECT_EQ(r.unavailable_free, 8);
}

TEST(NodeRow, SchedulableSaysWhyNot) {
  const struct {
    bool cordoned, ready;
    std::vector<scheduler::Taint> taints;
    const char* want;
  } cases[] = {
      {false, true, {}, "yes"},
      {false, true, {{"k", "", "PreferNoSchedule"}}, "yes"},
      {false, true, {{"k", "", "NoSchedule"}}, "yes (tainted)"},
      {false, true, {{"k", "v", "NoExecute"}}, "yes (tainted)"},
      {true, true, {{"k", "", "NoSchedule"}}, "cordoned"},
      {false, false, {}, "NotReady"},
      {true, false, {}, "cordoned,NotReady"},
  };
  for (const auto& c : cases) {
    NodeRow n;
    n.cordoned = c.cordoned;
    n.ready = c.ready;
    n.taints = c.taints;
    EXPECT_EQ(n.Schedulable(), c.want) << c.cordoned << c.ready << c.taints.size();
    EXPECT_EQ(n.TakesNewPods(), !c.cordoned && c.ready);
  }
}

TEST(NodeRow, FreeNeverNegative) {
  NodeRow n;
  n.allocatable.gpus = 4;
  n.requested.gpus = 6;  // kube-scheduler and the operator both placed there
  EXPECT_EQ(n.FreeGpus(), 0);
}

TEST(FormatNodeReport, TableThenSummary) {
  std::vector<Json> nodes = {Node({.name = "gpu-0", .clique = "c0", .taints = kNoSchedule}),
                             Node({.name = "gpu-1", .clique = "c0", .cordoned = true})};
  NodeReport r = BuildNodeReport(nodes, {Pod("gpu-0", 6)});
  EXPECT_EQ(FormatNodeReport(r, OutputFormat::kTable),
            "NAME    GPUS   ALLOCATED   FREE   PRODUCT   CLIQUE   SCHEDULABLE\n"
            "gpu-0   8      6           2      A100      c0       yes (tainted)\n"
            "gpu-1   8      0           8      A100      c0       cordoned\n"
            "\n"
            "PRODUCT   NODES   GPUS   ALLOCATED   FREE   LARGEST FREE\n"
            "A100      2       16     6           2      2 (gpu-0)\n"
            "total     2       16     6           2      2 (gpu-0)\n"
            "FREE leaves out 8 unallocated GPUs on cordoned or NotReady nodes.\n");
  const std::string wide =
      "NAME    GPUS   ALLOCATED   FREE   PRODUCT   CLIQUE   SCHEDULABLE     CPU    MEMORY"
      "        PODS    ZONE   RACK   TAINTS\n"
      "gpu-0   8      6           2      A100      c0       yes (tainted)   4/96   64Gi/1024Gi"
      "   1/110   z1     r0     nvidia.com/gpu=present:NoSchedule\n"
      "gpu-1   8      0      ";
  EXPECT_EQ(FormatNodeReport(r, OutputFormat::kWide).substr(0, wide.size()), wide);
}

TEST(FormatNodeReport, UnlabelledProductsAndNoFreeGpu) {
  NodeReport r = BuildNodeReport({Unlabelled("n-1", 2)}, {Pod("n-1", 2)});
  EXPECT_EQ(FormatNodeReport(r, OutputFormat::kTable),
            "NAME   GPUS   ALLOCATED   FREE   PRODUCT   CLIQUE   SCHEDULABLE\n"
            "n-1    2      2           0      -         -        yes\n"
            "\n"
            "PRODUCT        NODES   GPUS   ALLOCATED   FREE   LARGEST FREE\n"
            "(unlabelled)   1       2      2           0      0\n"
            "total          1       2      2           0      0\n");
}

TEST(FormatNodeReport, JsonAndYamlHoldTheSameReport) {
  NodeReport r = BuildNodeReport({Node({.name = "gpu-0", .clique = "c0", .taints = kNoSchedule})},
                                 {Pod("gpu-0", 3)});
  Json j = Json::parse(FormatNodeReport(r, OutputFormat::kJson));
  EXPECT_EQ(j["nodes"][0]["name"], "gpu-0");
  EXPECT_EQ(j["nodes"][0]["gpus"], (Json{{"allocatable", 8}, {"allocated", 3}, {"free", 5}}));
  EXPECT_EQ(j["nodes"][0]["gpuProduct"], "A100");
  EXPECT_EQ(j["nodes"][0]["gpuClique"], "c0");
  EXPECT_EQ(j["nodes"][0]["schedulable"], "yes (tainted)");
  EXPECT_EQ(j["nodes"][0]["taints"][0],
            (Json{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}));
  EXPECT_EQ(j["nodes"][0]["cpuMilli"], (Json{{"allocatable", 96000}, {"requested", 4000}}));
  EXPECT_EQ(j["summary"]["gpus"], 8);
  EXPECT_EQ(j["summary"]["free"], 5);
  EXPECT_EQ(j["summary"]["largestFreeNode"], "gpu-0");
  EXPECT_EQ(j["summary"]["products"][0]["gpuProduct"], "A100");
  EXPECT_EQ(YamlToJson(FormatNodeReport(r, OutputFormat::kYaml)).value(), j);
}

TEST(FormatQuantities, CoresAndMemory) {
  const std::pair<int64_t, const char*> cores[] = {{0, "0"},      {250, "250m"},   {1000, "1"},
                                                   {1500, "1.5"}, {95500, "95.5"}, {96000, "96"}};
  for (const auto& [milli, want] : cores) EXPECT_EQ(FormatCores(milli), want) << milli;
  const std::pair<int64_t, const char*> mem[] = {
      {0, "0Mi"}, {512, "512Mi"}, {1023, "1023Mi"}, {1024, "1Gi"}, {1056742, "1031Gi"}};
  for (const auto& [mib, want] : mem) EXPECT_EQ(FormatMib(mib), want) << mib;
}

}  // namespace
}  // namespace dljob
