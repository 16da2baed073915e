#include "tools/sim/trace_gen.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

namespace dljob::scheduler::sim {
namespace {

TEST(GenerateTrace, TheSameSeedTheSameTrace) {
  TraceShape shape;
  shape.jobs = 500;
  shape.gpus = 400;
  Trace a = GenerateTrace(shape), b = GenerateTrace(shape);
  EXPECT_EQ(a.jobs, b.jobs);
  EXPECT_EQ(a.nodes, b.nodes);
  shape.seed = 2;
  EXPECT_NE(GenerateTrace(shape).jobs, a.jobs);
}

// The shape of the 20,000-job trace the benchmark replays.
TEST(GenerateTrace, PhillyLikeShape) {
  Trace t = GenerateTrace(TraceShape{});
  ASSERT_EQ(t.nodes.size(), 812u);
  std::map<std::string, int> models;
  std::set<std::string> racks, zones, cliques;
  for (const Node& n : t.nodes) {
    EXPECT_EQ(n.allocatable.gpus, 8);
    ++models[n.labels.at(kGpuProductLabel)];
    racks.insert(n.labels.at(kDefaultRackLabel));
    zones.insert(n.labels.at(kZoneLabel));
    cliques.insert(n.labels.at(kGpuCliqueLabel));
  }
  EXPECT_EQ(models.size(), 3u);
  EXPECT_EQ(zones.size(), 4u);
  EXPECT_EQ(racks.size(), 51u);
  EXPECT_EQ(cliques.size(), 406u);

  ASSERT_EQ(t.jobs.size(), 20000u);
  std::map<int64_t, int> sizes;
  std::vector<int64_t> durations;
  int64_t last_submit = 0;
  for (const TraceJob& j : t.jobs) {
    ++sizes[j.num_gpu];
    durations.push_back(j.duration);
    EXPECT_GE(j.submit_time, last_submit);
    last_submit = j.submit_time;
    EXPECT_EQ(j.num_gpu % j.gpus_per_worker, 0);
    EXPECT_LE(j.gpus_per_worker, 8);
    ASSERT_TRUE(j.time_limit);
    EXPECT_GE(*j.time_limit, j.duration);
  }
  EXPECT_NEAR(sizes[1] / 20000.0, 0.45, 0.02);
  EXPECT_NEAR((sizes[16] + sizes[32] + sizes[64]) / 20000.0, 0.10, 0.02);
  std::sort(durations.begin(), durations.end());
  EXPECT_NEAR(durations[10000], 900, 60);  // median: minutes
  EXPECT_GT(durations[19900], 86400);      // the top 0.5%: over a day
  EXPECT_EQ(durations.back(), 7 * 86400);  // clamped at a week
  EXPECT_GT(last_submit, 12 * 3600);       // arrivals over hours
  EXPECT_EQ(t.queues.size(), 4u);
}

}  // namespace
}  // namespace dljob::scheduler::sim
