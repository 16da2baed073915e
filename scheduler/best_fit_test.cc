#include "scheduler/best_fit.h"

#include <gtest/gtest.h>

#include "scheduler/testing/cluster_builders.h"

namespace dljob::scheduler {
namespace {

using testing::GpuNode;
using testing::MakeGang;
using testing::Names;

TEST(BestFit, EachWorkerOnTheNodeWithTheLeastLeftAfterIt) {
  const struct {
    const char* name;
    Gang gang;
    std::vector<Node> nodes;
    Names want;
  } cases[] = {
      {"the fullest node first, then the next fullest",
       MakeGang(2, 2),
       {GpuNode("a", 8), GpuNode("b", 8).Used(6), GpuNode("c", 8).Used(4)},
       {"b", "c"}},
      {"stacks workers on one node while it has room",
       MakeGang(3, 2),
       {GpuNode("a", 8), GpuNode("b", 8)},
       {"a", "a", "a"}},
      {"whole nodes stay whole",
       MakeGang(2, 4),
       {GpuNode("whole", 8), GpuNode("half", 8).Used(4), GpuNode("quarter", 4)},
       {"half", "quarter"}},
      {"fractions: 4 of 16 left is fuller than 4 of 8",
       MakeGang(1, 4),
       {GpuNode("a", 8), GpuNode("b", 16).Used(8)},
       {"b"}},
      {"memory counts in the score",
       MakeGang(1, 2).Memory(1024),
       {GpuNode("a", 8).Used(2).Memory(65536), GpuNode("b", 8).Used(2).Memory(2048)},
       {"b"}},
  };
  for (const auto& c : cases) {
    Result<Placement> p = NewBestFitPolicy()->Place(c.gang, c.nodes);
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status().message();
    EXPECT_EQ(p->worker_nodes, c.want) << c.name;
  }
}

}  // namespace
}  // namespace dljob::scheduler
