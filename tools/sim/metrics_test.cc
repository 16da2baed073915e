#include "tools/sim/metrics.h"

#include <gtest/gtest.h>

namespace dljob::scheduler::sim {
namespace {

TEST(Percentile, NearestRank) {
  EXPECT_EQ(Percentile({}, 95), 0);
  EXPECT_EQ(Percentile({5}, 95), 5);
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(101 - i);  // unsorted 100..1
  EXPECT_EQ(Percentile(v, 95), 95);
  EXPECT_EQ(Percentile(v, 50), 50);
  EXPECT_EQ(Percentile(v, 100), 100);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 95), 4);
}

TEST(Summarize, FiguresFromOutcomes) {
  Trace t;
  t.jobs = {TraceJob{"a", 10, 50, 2, 2, "default", 0, "", std::nullopt},
            TraceJob{"b", 20, 30, 1, 1, "default", 0, "", std::nullopt},
            TraceJob{"c", 30, 5, 1, 1, "default", 0, "", std::nullopt}};
  SimResult r;
  r.policy = "p";
  r.jobs.resize(3);
  r.jobs[0] = {10, 60, 50, 0, false};
  r.jobs[1] = {40, 100, 45, 1, false};  // suspended once: waited 20 + 15
  r.total_gpus = 4;
  r.allocated_gpu_seconds = 200;
  r.busy_seconds = 100;
  r.queued_allocated_gpu_seconds = 60;
  r.queued_seconds = 20;
  r.fragmented_gpu_seconds = 30;
  r.free_gpu_seconds_while_blocked = 60;
  r.preemptions = 1;
  Summary s = Summarize(t, r);
  EXPECT_EQ(s.jobs, 3);
  EXPECT_EQ(s.finished, 2);
  EXPECT_DOUBLE_EQ(s.avg_jct, (50 + 80) / 2.0);
  EXPECT_DOUBLE_EQ(s.avg_wait, (0 + 35) / 2.0);
  EXPECT_DOUBLE_EQ(s.p95_jct, 80);
  EXPECT_EQ(s.makespan, 90);  // first submit 10, last finish 100
  EXPECT_DOUBLE_EQ(s.gpu_allocation, 0.5);
  EXPECT_DOUBLE_EQ(s.gpu_allocation_queued, 0.75);
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.5);
  EXPECT_EQ(s.preemptions, 1);
}

}  // namespace
}  // namespace dljob::scheduler::sim
