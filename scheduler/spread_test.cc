#include "scheduler/spread.h"

#include <gtest/gtest.h>

#include "scheduler/testing/cluster_builders.h"

namespace dljob::scheduler {
namespace {

using testing::GpuNode;
using testing::MakeGang;
using testing::Names;

TEST(Spread, EachWorkerOnTheLeastAllocatedNode) {
  const struct {
    const char* name;
    Gang gang;
    std::vector<Node> nodes;
    Names want;
  } cases[] = {
      {"emptiest first, ties by name",
       MakeGang(3, 2),
       {GpuNode("a", 8).Used(6), GpuNode("b", 8), GpuNode("c", 8).Used(2)},
       {"b", "b", "c"}},
      {"one worker per node while nodes are alike",
       MakeGang(3, 8),
       {GpuNode("c", 8), GpuNode("b", 8), GpuNode("a", 8)},
       {"a", "b", "c"}},
      {"fractions, not counts: a big node takes more",
       MakeGang(3, 2),
       {GpuNode("big", 16), GpuNode("small", 8)},
       {"big", "big", "small"}},
      {"CPU counts in the score",
       MakeGang(1, 2).Cpu(4000),
       {GpuNode("a", 8).Cpu(16000, 8000), GpuNode("b", 8).Used(2).Cpu(32000)},
       {"b"}},
      {"a gang that does not fit places nothing",
       MakeGang(2, 8),
       {GpuNode("a", 16).Used(8), GpuNode("b", 4)},
       {"a"}},
  };
  for (const auto& c : cases) {
    Result<Placement> p = NewSpreadPolicy()->Place(c.gang, c.nodes);
    if (c.want.size() != static_cast<size_t>(c.gang.workers)) {
      EXPECT_FALSE(p.ok()) << c.name;
      continue;
    }
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status().message();
    EXPECT_EQ(p->worker_nodes, c.want) << c.name;
  }
}

}  // namespace
}  // namespace dljob::scheduler
