#include "scheduler/first_fit.h"

#include <gtest/gtest.h>

#include "scheduler/testing/cluster_builders.h"

namespace dljob::scheduler {
namespace {

using testing::GpuNode;
using testing::MakeGang;
using testing::Names;

Result<Placement> FirstFit(const Gang& gang, const std::vector<Node>& nodes) {
  return NewFirstFitPolicy()->Place(gang, nodes);
}

TEST(FirstFit, AWholeGangGoesToTheTightestNodeThatHoldsIt) {
  auto p = FirstFit(MakeGang(2, 4), {GpuNode("big", 16), GpuNode("exact", 8), GpuNode("small", 4)});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Names{"exact", "exact"}));
}

TEST(FirstFit, SpreadsOverTheFewestNodesWhenNoneHoldsAll) {
  auto p = FirstFit(MakeGang(4, 8),
                    {GpuNode("a", 8), GpuNode("b", 16), GpuNode("c", 8), GpuNode("d", 8).Used(8)});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Names{"b", "b", "a", "c"}));
}

TEST(FirstFit, AllOrNothingWithAReason) {
  auto p = FirstFit(MakeGang(2, 8), {GpuNode("a", 8), GpuNode("b", 8).Used(4), GpuNode("c", 4)});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(p.status().message(),
            "needs 2 workers × 8 GPUs, room for 1: 16 free GPUs on 3 eligible nodes, largest 8; "
            "1/3 nodes are available: 2 Insufficient nvidia.com/gpu");
}

TEST(FirstFit, HonoursNodeSelectorCordonsAndTaints) {
  Gang gang = MakeGang(1, 8).Selector("gpu", "a100");
  std::vector<Node> nodes = {
      GpuNode("v100", 8).Label("gpu", "v100"),
      GpuNode("cordoned", 8).Label("gpu", "a100").Cordoned(),
      GpuNode("tainted", 8).Label("gpu", "a100").Taint("nvidia.com/gpu", "")};
  auto p = FirstFit(gang, nodes);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "needs 1 worker × 8 GPUs, room for 0: 0 free GPUs on 0 eligible nodes, largest 0; 0/3 "
            "nodes are available: 1 node(s) didn't match node selector, 1 node(s) had untolerated "
            "taint {nvidia.com/gpu: }, 1 node(s) were unschedulable");
  gang.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt}};
  p = FirstFit(gang, nodes);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Names{"tainted"}));
}

TEST(FirstFit, TiesGoByNameWhateverTheOrderOfTheNodes) {
  auto p = FirstFit(MakeGang(1, 8), {GpuNode("c", 8), GpuNode("a", 8), GpuNode("b", 8)});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->worker_nodes, (Names{"a"}));
}

TEST(FirstFit, CpuAndMemoryLimitTheWorkersANodeTakes) {
  // 16 GPUs but CPU for one worker only: the second worker goes elsewhere.
  auto p = FirstFit(MakeGang(2, 4).Cpu(8000),
                    {GpuNode("a", 16).Cpu(12000), GpuNode("b", 8).Cpu(64000, 60000),
                     GpuNode("c", 8).Memory(1024)});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Names{"c", "c"}));
  p = FirstFit(MakeGang(2, 4).Cpu(8000).Memory(2048),
               {GpuNode("a", 16).Cpu(12000), GpuNode("b", 8).Cpu(64000, 60000),
                GpuNode("c", 8).Memory(1024)});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "needs 2 workers × 4 GPUs + 8 CPU + 2Gi memory, room for 1: 32 free GPUs on 3 "
            "eligible nodes, largest 16; 1/3 nodes are available: 1 Insufficient cpu, 1 "
            "Insufficient memory");
}

}  // namespace
}  // namespace dljob::scheduler
