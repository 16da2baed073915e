#include "operator/scheduler/first_fit.h"

#include <gtest/gtest.h>

namespace dljob::scheduler {
namespace {

DLJob Job(int64_t gpus, int64_t per_worker) {
  DLJob job;
  job.spec.gpus = gpus;
  job.spec.gpus_per_worker = per_worker;
  return job;
}

NodeState Node(const std::string& name, int64_t gpus, int64_t used = 0) {
  NodeState n;
  n.name = name;
  n.allocatable_gpus = gpus;
  n.used_gpus = used;
  return n;
}

using Nodes = std::vector<std::string>;

TEST(PlaceGang, AWholeGangGoesToTheTightestNodeThatHoldsIt) {
  auto p = PlaceGang(Job(8, 4), {Node("big", 16), Node("exact", 8), Node("small", 4)});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Nodes{"exact", "exact"}));
}

TEST(PlaceGang, SpreadsOverTheFewestNodesWhenNoneHoldsAll) {
  auto p = PlaceGang(Job(32, 8), {Node("a", 8), Node("b", 16), Node("c", 8), Node("d", 8, 8)});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Nodes{"b", "b", "a", "c"}));
}

TEST(PlaceGang, AllOrNothingWithAReason) {
  auto p = PlaceGang(Job(16, 8), {Node("a", 8), Node("b", 8, 4), Node("c", 4)});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(p.status().message(),
            "needs 2 workers × 8 GPUs; 3 of 3 nodes match nodeSelector and tolerations, with room "
            "for 1");
}

TEST(PlaceGang, HonoursNodeSelectorCordonsAndTaints) {
  DLJob job = Job(8, 8);
  job.spec.scheduling.node_selector = {{"gpu", "a100"}};
  NodeState wrong = Node("v100", 8);
  wrong.labels = {{"gpu", "v100"}};
  NodeState cordoned = Node("cordoned", 8);
  cordoned.labels = {{"gpu", "a100"}};
  cordoned.schedulable = false;
  NodeState tainted = Node("tainted", 8);
  tainted.labels = {{"gpu", "a100"}};
  tainted.taints = {{"nvidia.com/gpu", "", "NoSchedule"}};
  auto p = PlaceGang(job, {wrong, cordoned, tainted});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("0 of 3 nodes match"), std::string::npos);
  job.spec.scheduling.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt}};
  p = PlaceGang(job, {wrong, cordoned, tainted});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->worker_nodes, (Nodes{"tainted"}));
}

TEST(ToleratesTaints, FollowsKubernetesMatching) {
  std::vector<Taint> taints = {{"k", "v", "NoSchedule"}};
  EXPECT_FALSE(ToleratesTaints({}, taints));
  EXPECT_TRUE(ToleratesTaints({}, {{"k", "v", "PreferNoSchedule"}}));
  EXPECT_TRUE(ToleratesTaints({{"k", "Equal", "v", "", std::nullopt}}, taints));
  EXPECT_FALSE(ToleratesTaints({{"k", "Equal", "other", "", std::nullopt}}, taints));
  EXPECT_FALSE(ToleratesTaints({{"k", "Exists", "", "NoExecute", std::nullopt}}, taints));
  EXPECT_TRUE(ToleratesTaints({{"", "Exists", "", "", std::nullopt}}, taints));
}

}  // namespace
}  // namespace dljob::scheduler
