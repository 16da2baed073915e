#include "scheduler/feasibility.h"

#include <gtest/gtest.h>

#include "scheduler/testing/cluster_builders.h"

namespace dljob::scheduler {
namespace {

using testing::GpuNode;
using testing::MakeGang;

using Labels = std::map<std::string, std::string>;

TEST(ToleratesTaints, FollowsKubernetesMatching) {
  const struct {
    std::vector<Toleration> tolerations;
    std::vector<Taint> taints;
    bool tolerated;
  } cases[] = {
      {{}, {{"k", "v", "NoSchedule"}}, false},
      {{}, {{"k", "v", "PreferNoSchedule"}}, true},  // never blocks
      {{}, {{"k", "v", "NoExecute"}}, false},
      {{{"k", "Equal", "v", "", std::nullopt}}, {{"k", "v", "NoSchedule"}}, true},
      {{{"k", "", "v", "", std::nullopt}}, {{"k", "v", "NoSchedule"}}, true},  // "" is Equal
      {{{"k", "Equal", "other", "", std::nullopt}}, {{"k", "v", "NoSchedule"}}, false},
      {{{"k", "Exists", "", "NoExecute", std::nullopt}}, {{"k", "v", "NoSchedule"}}, false},
      {{{"k", "Exists", "", "NoSchedule", std::nullopt}}, {{"k", "v", "NoSchedule"}}, true},
      {{{"", "Exists", "", "", std::nullopt}}, {{"k", "v", "NoSchedule"}}, true},
      {{{"", "Equal", "v", "", std::nullopt}}, {{"k", "v", "NoSchedule"}}, false},
      {{{"other", "Exists", "", "", std::nullopt}}, {{"k", "v", "NoSchedule"}}, false},
      // Every taint needs a toleration of its own.
      {{{"a", "Exists", "", "", std::nullopt}},
       {{"a", "", "NoSchedule"}, {"b", "", "NoSchedule"}},
       false},
      {{{"a", "Exists", "", "", std::nullopt}, {"b", "Exists", "", "", std::nullopt}},
       {{"a", "", "NoSchedule"}, {"b", "", "NoSchedule"}},
       true},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(ToleratesTaints(cases[i].tolerations, cases[i].taints), cases[i].tolerated)
        << "case " << i;
  }
}

TEST(MatchesNodeSelector, EveryKeyWithItsValue) {
  Labels labels = {{"gpu", "a100"}, {"zone", "z1"}};
  EXPECT_TRUE(MatchesNodeSelector({}, labels));
  EXPECT_TRUE(MatchesNodeSelector({{"gpu", "a100"}}, labels));
  EXPECT_TRUE(MatchesNodeSelector({{"gpu", "a100"}, {"zone", "z1"}}, labels));
  EXPECT_FALSE(MatchesNodeSelector({{"gpu", "v100"}}, labels));
  EXPECT_FALSE(MatchesNodeSelector({{"rack", "r1"}}, labels));
}

TEST(MatchesRequirement, EveryOperatorAsKubernetesDefinesIt) {
  Labels labels = {{"gpu", "a100"}, {"mem", "80"}, {"odd", "x1"}};
  const struct {
    NodeSelectorRequirement r;
    bool matches;
  } cases[] = {
      {{"gpu", "In", {"a100", "h100"}}, true},
      {{"gpu", "In", {"v100"}}, false},
      {{"absent", "In", {"a100"}}, false},
      {{"gpu", "NotIn", {"v100"}}, true},
      {{"gpu", "NotIn", {"a100"}}, false},
      {{"absent", "NotIn", {"a100"}}, true},  // absent labels are not in any set
      {{"gpu", "Exists", {}}, true},
      {{"absent", "Exists", {}}, false},
      {{"gpu", "DoesNotExist", {}}, false},
      {{"absent", "DoesNotExist", {}}, true},
      {{"mem", "Gt", {"40"}}, true},
      {{"mem", "Gt", {"80"}}, false},
      {{"mem", "Lt", {"81"}}, true},
      {{"mem", "Lt", {"80"}}, false},
      {{"mem", "Gt", {"-5"}}, true},
      {{"absent", "Gt", {"1"}}, false},
      {{"odd", "Gt", {"1"}}, false},       // not an integer label
      {{"mem", "Gt", {"x"}}, false},       // not an integer value
      {{"mem", "Gt", {"1", "2"}}, false},  // exactly one value
      {{"mem", "Lt", {}}, false},
      {{"gpu", "Matches", {"a100"}}, false},  // unknown operator
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MatchesRequirement(c.r, labels), c.matches)
        << c.r.key << " " << c.r.operator_ << " " << (c.r.values.empty() ? "" : c.r.values[0]);
  }
}

TEST(MatchesNodeAffinity, TermsAreOredAndRequirementsAnded) {
  Labels labels = {{"gpu", "a100"}, {"zone", "z1"}};
  NodeSelectorRequirement a100{"gpu", "In", {"a100"}}, z2{"zone", "In", {"z2"}},
      z1{"zone", "In", {"z1"}};
  EXPECT_TRUE(MatchesNodeAffinity({}, labels));  // no affinity: any node
  EXPECT_TRUE(MatchesNodeAffinity({{{a100, z1}}}, labels));
  EXPECT_FALSE(MatchesNodeAffinity({{{a100, z2}}}, labels));
  EXPECT_TRUE(MatchesNodeAffinity({{{a100, z2}}, {{z1}}}, labels));
  EXPECT_FALSE(MatchesNodeAffinity({{{z2}}, {{{"gpu", "NotIn", {"a100"}}}}}, labels));
  EXPECT_FALSE(MatchesNodeAffinity({NodeSelectorTerm{}}, labels));  // an empty term: nothing
}

TEST(Slots, TheLeastOverTheResourcesTheNodeAccountsFor) {
  const struct {
    Node node;
    Resources per_worker;
    int64_t slots;
  } cases[] = {
      {GpuNode("n", 8), {2, 0, 0, 1}, 4},
      {GpuNode("n", 8).Used(3), {2, 0, 0, 1}, 2},
      {GpuNode("n", 8).Used(9), {2, 0, 0, 1}, 0},  // over-committed already
      {GpuNode("n", 0), {1, 0, 0, 1}, 0},          // GPUs are always accounted
      {GpuNode("n", 0), {0, 1000, 0, 1}, 100},     // nothing accounted: the cap
      {GpuNode("n", 8).Cpu(10000), {2, 4000, 0, 1}, 2},
      {GpuNode("n", 8).Cpu(10000, 3000), {2, 4000, 0, 1}, 1},
      {GpuNode("n", 8).Memory(1000), {2, 0, 400, 1}, 2},
      {GpuNode("n", 8).Pods(110, 109), {2, 0, 0, 1}, 1},
      {GpuNode("n", 8).Pods(110, 110), {2, 0, 0, 1}, 0},
      {GpuNode("n", 8).Memory(1000), {2, 0, 0, 1}, 4},  // accounted but not asked
      {GpuNode("n", 200), {1, 0, 0, 1}, 100},           // capped
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(Slots(cases[i].node, cases[i].per_worker, 100), cases[i].slots) << "case " << i;
  }
  Node n = GpuNode("n", 8).Cpu(10000);
  EXPECT_EQ(SlotsAfter(n, {2, 2000, 0, 1}, 3, 100), 1);
  EXPECT_EQ(SlotsAfter(n, {2, 2000, 0, 1}, 4, 100), 0);
  EXPECT_EQ(Free(GpuNode("n", 8).Used(10).Cpu(100, 40)), (Resources{0, 60, 0, 0}));
}

TEST(Candidates, EligibleNodesWithRoomByName) {
  Gang gang = MakeGang(3, 4).Selector("pool", "train");
  std::vector<Node> nodes = {
      GpuNode("c", 8).Label("pool", "train"), GpuNode("a", 16).Label("pool", "train"),
      GpuNode("b", 8).Label("pool", "serve"), GpuNode("d", 8).Label("pool", "train").Used(6),
      GpuNode("e", 8).Label("pool", "train").Cordoned()};
  std::vector<Candidate> c = Candidates(gang, nodes);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].node->name, "a");
  EXPECT_EQ(c[0].slots, 3);  // 4 by GPUs, capped at the gang's 3 workers
  EXPECT_EQ(c[1].node->name, "c");
  EXPECT_EQ(c[1].slots, 2);
  EXPECT_EQ(Room(c), 5);
}

TEST(Unplaceable, CountsEachReasonAndSummarisesTheGang) {
  Gang gang = MakeGang(2, 8).Model("A100").Affinity({{{{"zone", "NotIn", {"z9"}}}}});
  const std::string a100 = "A100";
  std::vector<Node> nodes = {
      GpuNode("a", 8).Label(kGpuProductLabel, a100).Used(4),
      GpuNode("b", 8).Label(kGpuProductLabel, a100).Used(4),
      GpuNode("c", 8).Label(kGpuProductLabel, a100).Used(8).Pods(10, 10),
      GpuNode("d", 8).Label(kGpuProductLabel, a100),
      GpuNode("e", 8).Label(kGpuProductLabel, "V100"),
      GpuNode("f", 8),
      GpuNode("g", 8).Label(kGpuProductLabel, a100).Label("zone", "z9"),
      GpuNode("h", 8).Label(kGpuProductLabel, a100).Taint("team", "x"),
      GpuNode("i", 8).Label(kGpuProductLabel, a100).Taint("team", "x", "NoExecute"),
      GpuNode("j", 8).Label(kGpuProductLabel, a100).Cordoned(),
  };
  Status s = Unplaceable(gang, nodes);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "needs 2 workers × 8 GPUs (A100), room for 1: 16 free GPUs on 4 eligible nodes, "
            "largest 8; 1/10 nodes are available: 3 Insufficient nvidia.com/gpu, 2 node(s) didn't "
            "match node selector, 2 node(s) had untolerated taint {team: x}, 1 Too many pods, 1 "
            "node(s) didn't match node affinity, 1 node(s) were unschedulable");
}

}  // namespace
}  // namespace dljob::scheduler
