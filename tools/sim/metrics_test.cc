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
  t.jobs = {TraceJob{"a", 10, 50, 2, 2, "default", 0, "", std::nullopt, std::nullopt},
            TraceJob{"b", 20, 30, 1, 1, "default", 0, "", std::nullopt, std::nullopt},
            TraceJob{"c", 30, 5, 1, 1, "default", 0, "", std::nullopt, std::nullopt}};
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

// Three jobs' estimates: errors, the ±25% share (of the wait left when made), bias, and the
// first estimate of each job on its own; unknown ones and those of jobs that never started are
// not in the error figures.
TEST(Summarize, EstimateAccuracy) {
  Trace t;
  t.jobs = {TraceJob{"a", 0, 50, 1, 1, "default", 0, "", std::nullopt, std::nullopt},
            TraceJob{"b", 0, 50, 1, 1, "default", 0, "", std::nullopt, std::nullopt},
            TraceJob{"c", 0, 50, 1, 1, "default", 0, "", std::nullopt, std::nullopt},
            TraceJob{"d", 0, 50, 1, 1, "default", 0, "", std::nullopt, std::nullopt}};
  SimResult r;
  r.jobs.resize(4);
  r.jobs[0].first_start = 100;
  r.jobs[1].first_start = 400;
  r.jobs[2].first_start = 1000;
  // d never started.
  r.estimates = {
      {{0, 120, EstimateBasis::kProgress}, {50, 100, EstimateBasis::kProgress}},  // +20, 0
      {{0, 200, EstimateBasis::kTimeLimit}},                                      // -200
      {{0, std::nullopt, EstimateBasis::kUnknown}, {500, 1300, EstimateBasis::kTimeLimit}},  // +300
      {{0, 900, EstimateBasis::kTimeLimit}},  // never started: not scored
  };
  r.estimate_runs = 7;
  Summary s = Summarize(t, r);
  ASSERT_TRUE(s.estimated);
  EXPECT_EQ(s.estimated_jobs, 4);
  EXPECT_EQ(s.estimate_runs, 7);
  // All: errors 20, 0, 200, 300; within 25%: 20 <= 25, 0 <= 12.5; 200 > 100; 300 > 125.
  EXPECT_EQ(s.estimates.count, 4);
  EXPECT_EQ(s.estimates.unknown, 1);
  EXPECT_DOUBLE_EQ(s.estimates.median_error, 20);
  EXPECT_DOUBLE_EQ(s.estimates.p90_error, 300);
  EXPECT_DOUBLE_EQ(s.estimates.within_25, 0.5);
  EXPECT_DOUBLE_EQ(s.estimates.median_bias, 0);  // biases -200, 0, 20, 300
  // First of each: a +20 (within), b -200, c unknown.
  EXPECT_EQ(s.at_submission.count, 2);
  EXPECT_EQ(s.at_submission.unknown, 1);
  EXPECT_DOUBLE_EQ(s.at_submission.median_error, 20);
  EXPECT_DOUBLE_EQ(s.at_submission.within_25, 0.5);
  EXPECT_DOUBLE_EQ(s.at_submission.median_bias, -200);
  // Without estimates there are no such figures.
  r.estimates.clear();
  EXPECT_FALSE(Summarize(t, r).estimated);
}

}  // namespace
}  // namespace dljob::scheduler::sim
