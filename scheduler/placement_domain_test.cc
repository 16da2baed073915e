#include "scheduler/placement_domain.h"

#include <gtest/gtest.h>

namespace dljob::scheduler {
namespace {

Node At(const std::string& name, const std::string& clique, const std::string& rack,
        const std::string& zone) {
  Node n;
  n.name = name;
  if (!clique.empty()) n.labels[kGpuCliqueLabel] = clique;
  if (!rack.empty()) n.labels[kDefaultRackLabel] = rack;
  if (!zone.empty()) n.labels[kZoneLabel] = zone;
  return n;
}

std::string Describe(const std::vector<Node>& nodes) {
  return DescribePlacementDomain(nodes, kDefaultRackLabel);
}

TEST(PlacementDomainTest, NamesTheTightestDomainHoldingEveryNodeAndWhatItSpans) {
  EXPECT_EQ(Describe({At("n1", "c0", "r0", "z")}), "n1 (clique c0, rack r0, zone z)");
  EXPECT_EQ(Describe({At("n1", "c0", "r0", "z"), At("n2", "c0", "r0", "z")}),
            "2 nodes of clique c0 (rack r0, zone z)");
  EXPECT_EQ(Describe({At("n1", "c0", "r0", "z"), At("n2", "c1", "r0", "z")}),
            "2 nodes of rack r0 (cliques c0, c1; zone z)");
  EXPECT_EQ(
      Describe({At("n1", "c0", "r0", "z"), At("n2", "c1", "r1", "z"), At("n3", "c2", "r1", "z")}),
      "3 nodes of zone z (cliques c0, c1, c2; racks r0, r1)");
  EXPECT_EQ(Describe({At("n1", "c0", "r0", "z"), At("n2", "c1", "r1", "y")}),
            "2 nodes in no one clique, rack or zone");
}

TEST(PlacementDomainTest, LeavesOutLabelsANodeLacks) {
  EXPECT_EQ(Describe({At("n1", "", "", "")}), "n1");
  EXPECT_EQ(Describe({At("n1", "", "r0", "")}), "n1 (rack r0)");
  EXPECT_EQ(Describe({At("n1", "", "r0", "z"), At("n2", "", "r0", "z")}),
            "2 nodes of rack r0 (zone z)");
  // A clique on one node only is no shared clique; it is listed below the rack.
  EXPECT_EQ(Describe({At("n1", "c0", "r0", ""), At("n2", "", "r0", "")}),
            "2 nodes of rack r0 (cliques c0)");
  EXPECT_EQ(Describe({}), "");
}

TEST(PlacementDomainTest, ReadsTheRackLabelItIsGiven) {
  Node n = At("n1", "", "", "");
  n.labels["example.com/rack"] = "r7";
  EXPECT_EQ(DescribePlacementDomain({n}, "example.com/rack"), "n1 (rack r7)");
  EXPECT_EQ(DescribePlacementDomain({n}, kDefaultRackLabel), "n1");
}

}  // namespace
}  // namespace dljob::scheduler
