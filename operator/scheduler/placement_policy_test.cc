#include "operator/scheduler/placement_policy.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dljob::scheduler
