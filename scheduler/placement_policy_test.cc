#include "scheduler/placement_policy.h"

#include <optional>

#include <gtest/gtest.h>

#include "scheduler/testing/cluster_builders.h"

namespace dljob::scheduler {
namespace {

TEST(MakePlacementPolicy, EveryListedNameMakesThePolicyOfThatName) {
  std::vector<std::string_view> names = PlacementPolicyNames();
  EXPECT_EQ(names, (std::vector<std::string_view>{"first-fit", "spread", "best-fit", "dljob"}));
  for (std::string_view name : names) {
    Result<PlacementPolicyPtr> p = MakePlacementPolicy(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ((*p)->Name(), name);
  }
}

TEST(MakePlacementPolicy, AnUnknownNameListsTheKnownOnes) {
  Result<PlacementPolicyPtr> p = MakePlacementPolicy("random");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "unknown placement policy \"random\"; known: first-fit, spread, best-fit, dljob");
}

using testing::GpuNode;
using testing::MakeGang;
using testing::Names;

// Where exactly one node can take the gang, every policy must choose it.
TEST(EveryPolicy, GoesWhereTheFiltersAllow) {
  const NodeSelectorRequirement big{"gpu-mem", "Gt", {"40"}};
  const struct {
    const char* name;
    Gang gang;
    std::vector<Node> nodes;
    Names want;  // empty: does not fit
  } cases[] = {
      {"nodeSelector",
       MakeGang(1, 8).Model("A100"),
       {GpuNode("a", 8).Label(kGpuProductLabel, "V100"), GpuNode("b", 8),
        GpuNode("c", 8).Label(kGpuProductLabel, "A100")},
       {"c"}},
      {"required affinity Gt",
       MakeGang(1, 8).Affinity({{{big}}}),
       {GpuNode("a", 8).Label("gpu-mem", "40"), GpuNode("b", 8).Label("gpu-mem", "80")},
       {"b"}},
      {"affinity terms are ORed",
       MakeGang(1, 8).Affinity({{{big}}, {{{"x", "Exists", {}}}}}),
       {GpuNode("a", 8).Label("gpu-mem", "16"), GpuNode("b", 8).Label("x", "")},
       {"b"}},
      {"untolerated taints",
       MakeGang(1, 8).Tolerate("team", "Equal", "ml"),
       {GpuNode("a", 8).Taint("team", "web"), GpuNode("b", 8).Taint("team", "ml"),
        GpuNode("c", 8).Taint("gpu", "", "NoExecute")},
       {"b"}},
      {"PreferNoSchedule does not block",
       MakeGang(1, 8),
       {GpuNode("a", 8).Taint("soft", "", "PreferNoSchedule")},
       {"a"}},
      {"cordoned", MakeGang(1, 8), {GpuNode("a", 8).Cordoned(), GpuNode("b", 8)}, {"b"}},
      {"CPU",
       MakeGang(1, 8).Cpu(8000),
       {GpuNode("a", 8).Cpu(16000, 9000), GpuNode("b", 8).Cpu(16000, 8000)},
       {"b"}},
      {"memory",
       MakeGang(1, 8).Memory(4096),
       {GpuNode("a", 8).Memory(8192, 4097), GpuNode("b", 8).Memory(8192)},
       {"b"}},
      {"pods",
       MakeGang(1, 8),
       {GpuNode("a", 8).Pods(110, 110), GpuNode("b", 8).Pods(110, 109)},
       {"b"}},
      {"GPUs",
       MakeGang(2, 4),
       {GpuNode("a", 8).Used(5), GpuNode("b", 8).Used(4), GpuNode("c", 4).Used(1)},
       {}},
      {"all or nothing", MakeGang(3, 8), {GpuNode("a", 16), GpuNode("b", 8).Cordoned()}, {}},
  };
  for (std::string_view name : PlacementPolicyNames()) {
    PlacementPolicyPtr policy = std::move(MakePlacementPolicy(name).value());
    for (const auto& c : cases) {
      Result<Placement> p = policy->Place(c.gang, c.nodes);
      if (c.want.empty()) {
        ASSERT_FALSE(p.ok()) << name << ", " << c.name;
        EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
        continue;
      }
      ASSERT_TRUE(p.ok()) << name << ", " << c.name << ": " << p.status().message();
      EXPECT_EQ(p->worker_nodes, c.want) << name << ", " << c.name;
    }
  }
}

// TryPlace places exactly as Place does, and where Place says why a gang does not fit, it says
// only that it does not.
TEST(EveryPolicy, TryPlaceIsPlaceWithoutTheReason) {
  const std::vector<Node> nodes = {GpuNode("a", 8).Used(6), GpuNode("b", 8).Used(2),
                                   GpuNode("c", 8).Taint("gpu", "", "NoSchedule"), GpuNode("d", 4)};
  const Gang gangs[] = {MakeGang(1, 4), MakeGang(2, 4), MakeGang(3, 2),
                        MakeGang(4, 4), MakeGang(1, 8), MakeGang(7, 2)};
  for (std::string_view name : PlacementPolicyNames()) {
    PlacementPolicyPtr policy = std::move(MakePlacementPolicy(name).value());
    int fits = 0;
    for (const Gang& gang : gangs) {
      Result<Placement> placed = policy->Place(gang, nodes);
      std::optional<Placement> tried = policy->TryPlace(gang, nodes);
      ASSERT_EQ(placed.ok(), tried.has_value()) << name << ", " << gang.workers << " workers";
      if (!tried) {
        EXPECT_NE(placed.status().message().find("needs"), std::string::npos);
        continue;
      }
      ++fits;
      EXPECT_EQ(tried->worker_nodes, placed->worker_nodes) << name;
    }
    EXPECT_EQ(fits, 3) << name;  // 1×4, 2×4, 3×2 fit; 4×4, 1×8 and 7×2 do not (c is tainted)
  }
}

}  // namespace
}  // namespace dljob::scheduler
