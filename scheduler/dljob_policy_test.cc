#include "scheduler/dljob_policy.h"

#include <gtest/gtest.h>

#include "scheduler/testing/cluster_builders.h"

namespace dljob::scheduler {
namespace {

using testing::GpuNode;
using testing::MakeGang;
using testing::Names;
using testing::NodeBuilder;

// An 8-GPU node in clique/rack/zone ("" leaves a label off).
NodeBuilder In(const std::string& name, const std::string& clique, const std::string& rack,
               const std::string& zone) {
  NodeBuilder n = GpuNode(name, 8);
  if (!clique.empty()) n.Label(kGpuCliqueLabel, clique);
  if (!rack.empty()) n.Label(kDefaultRackLabel, rack);
  if (!zone.empty()) n.Label(kZoneLabel, zone);
  return n;
}

struct Case {
  const char* name;
  Gang gang;
  std::vector<Node> nodes;
  Names want;
};

void Check(const std::vector<Case>& cases, const PlacementOptions& options = {}) {
  PlacementPolicyPtr policy = NewDljobPolicy(options);
  for (const Case& c : cases) {
    Result<Placement> p = policy->Place(c.gang, c.nodes);
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status().message();
    EXPECT_EQ(p->worker_nodes, c.want) << c.name;
  }
}

TEST(DljobPolicy, FewestNodesFirst) {
  Check({
      {"one node that holds the gang beats one clique of two",
       MakeGang(2, 8),
       {In("x1", "c1", "r1", "z1"), In("x2", "c1", "r1", "z1"), GpuNode("y", 16)},
       {"y", "y"}},
      {"several workers per node when resources allow",
       MakeGang(4, 2),
       {GpuNode("a", 8), GpuNode("b", 8)},
       {"a", "a", "a", "a"}},
      {"the roomiest nodes decide how few: 16 + 8 for three workers of 8",
       MakeGang(3, 8),
       {GpuNode("a", 8), GpuNode("b", 8), GpuNode("c", 16), GpuNode("d", 8).Used(4)},
       {"a", "c", "c"}},
  });
}

TEST(DljobPolicy, PackKeepsTheGangInOneCliqueThenRackThenZone) {
  for (Topology t : {Topology::kPack, Topology::kAny}) {
    Check({
        {"one clique",
         MakeGang(2, 8).Topo(t),
         {In("n1", "c1", "r1", "z1"), In("n2", "c2", "r1", "z1"), In("n3", "c2", "r1", "z1")},
         {"n2", "n3"}},
        {"one rack when no clique holds it",
         MakeGang(2, 8).Topo(t),
         {In("n1", "c1", "r1", "z1"), In("n2", "c2", "r2", "z1"), In("n3", "c3", "r2", "z1")},
         {"n2", "n3"}},
        {"one zone when no rack holds it",
         MakeGang(2, 8).Topo(t),
         {In("n1", "", "r1", "z1"), In("n2", "", "r2", "z2"), In("n3", "", "r3", "z2")},
         {"n2", "n3"}},
        {"anywhere when no zone holds it",
         MakeGang(2, 8).Topo(t),
         {In("n1", "", "", "z1"), In("n2", "", "", "z2"), In("n3", "", "", "z3")},
         {"n1", "n2"}},
        {"a smaller domain beats a larger one that fits better",
         MakeGang(3, 4).Topo(t),
         {In("a1", "c1", "r1", "z1"), In("a2", "c1", "r1", "z1"), In("b1", "", "r2", "z1").Used(4),
          In("b2", "", "r2", "z1")},
         {"a1", "a1", "a2"}},
        {"the best-fitting clique of several",
         MakeGang(3, 4).Topo(t),
         {In("a1", "ca", "r1", "z1"), In("a2", "ca", "r1", "z1"),
          In("b1", "cb", "r1", "z1").Used(4), In("b2", "cb", "r1", "z1")},
         {"b1", "b2", "b2"}},
        {"within the rack, the cliques already chosen first",
         MakeGang(3, 8).Topo(t),
         {In("n1", "c1", "r1", "z1"), In("n2", "c2", "r1", "z1"), In("n3", "c3", "r1", "z1"),
          In("n4", "c1", "r1", "z1")},
         {"n1", "n4", "n2"}},
        {"within the zone, the racks already chosen first",
         MakeGang(3, 8).Topo(t),
         {In("n1", "", "r1", "z1"), In("n2", "", "r2", "z1"), In("n3", "", "r3", "z1"),
          In("n4", "", "r1", "z1")},
         {"n1", "n4", "n2"}},
        {"one node is one domain: best fit decides",
         MakeGang(1, 4).Topo(t),
         {In("a", "c1", "r1", "z1"), In("b", "", "", "").Used(4)},
         {"b"}},
    });
  }
}

TEST(DljobPolicy, SpreadGoesAcrossZonesThenRacksThenCliques) {
  Check({
      {"zones",
       MakeGang(2, 8).Topo(Topology::kSpread),
       {In("n1", "c1", "r1", "z1"), In("n2", "c1", "r1", "z1"), In("n3", "c2", "r2", "z2")},
       {"n1", "n3"}},
      {"racks within a zone",
       MakeGang(3, 8).Topo(Topology::kSpread),
       {In("n1", "c1", "r1", "z1"), In("n2", "c1", "r1", "z1"), In("n3", "c2", "r2", "z1"),
        In("n4", "c3", "r3", "z1")},
       {"n1", "n3", "n4"}},
      {"cliques within a rack",
       MakeGang(2, 8).Topo(Topology::kSpread),
       {In("n1", "c1", "r1", "z1"), In("n2", "c1", "r1", "z1"), In("n3", "c2", "r1", "z1")},
       {"n1", "n3"}},
      {"still the fewest nodes",
       MakeGang(2, 4).Topo(Topology::kSpread),
       {In("n1", "c1", "r1", "z1"), In("n2", "c2", "r2", "z2")},
       {"n1", "n1"}},
  });
}

TEST(DljobPolicy, BestFitKeepsWholeNodesFree) {
  Check({
      {"a partly used node before a whole one",
       MakeGang(1, 4),
       {GpuNode("a", 8), GpuNode("b", 8).Used(4)},
       {"b"}},
      {"the tight node with the node that completes the gang",
       MakeGang(3, 4),
       {GpuNode("a", 8), GpuNode("b", 8).Used(4), GpuNode("c", 8)},
       {"b", "a", "a"}},
      {"fewer free GPUs first when slots tie",
       MakeGang(1, 2).Cpu(4000),
       {GpuNode("a", 8).Used(6), GpuNode("b", 8).Cpu(4000)},
       {"a"}},
  });
}

TEST(DljobPolicy, CachedDatasetsBreakTies) {
  Check({
      {"the node that caches the data",
       MakeGang(1, 8).Reads("oss://b/imagenet"),
       {GpuNode("a", 8), GpuNode("b", 8).Caches("oss://b/imagenet")},
       {"b"}},
      {"the node that caches more of it",
       MakeGang(1, 8).Reads("d1").Reads("d2"),
       {GpuNode("a", 8).Caches("d1"), GpuNode("b", 8).Caches("d1").Caches("d2"),
        GpuNode("c", 8).Caches("d2")},
       {"b"}},
      {"the clique that caches it, of two that fit alike",
       MakeGang(2, 8).Reads("d"),
       {In("a1", "ca", "", ""), In("a2", "ca", "", ""), In("b1", "cb", "", "").Caches("d"),
        In("b2", "cb", "", "")},
       {"b1", "b2"}},
      {"but fit comes first",
       MakeGang(1, 4).Reads("d"),
       {GpuNode("a", 8).Used(4), GpuNode("b", 8).Caches("d")},
       {"a"}},
  });
}

TEST(DljobPolicy, TheRackLabelIsAnOption) {
  PlacementOptions options;
  options.rack_label = "example.com/rack";
  Check({{"racks by the configured label",
          MakeGang(2, 8),
          {GpuNode("n1", 8).Label("example.com/rack", "r1").Label(kDefaultRackLabel, "x"),
           GpuNode("n2", 8).Label("example.com/rack", "r2").Label(kDefaultRackLabel, "y"),
           GpuNode("n3", 8).Label("example.com/rack", "r2").Label(kDefaultRackLabel, "x")},
          {"n2", "n3"}}},
        options);
}

}  // namespace
}  // namespace dljob::scheduler
