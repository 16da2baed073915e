// The operator's estimate inputs: running jobs' expected ends from their progress and step rates.
#include "operator/controller/start_estimates.h"

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

constexpr int64_t kNow = 1'800'000'000;

std::string Rfc3339(int64_t unix_seconds) {
  return FormatRfc3339(WallTime(std::chrono::seconds(unix_seconds)));
}

QueuedJobPtr Running(const std::string& name, std::optional<int64_t> step,
                     std::optional<int64_t> total, int64_t at) {
  QueuedJob q;
  q.job.metadata.namespace_ = "ns";
  q.job.metadata.name = name;
  q.job.status.phase = JobPhase::kRunning;
  Throughput t;
  t.step = step;
  t.total_steps = total;
  t.updated_at = Rfc3339(at);
  q.job.status.throughput = t;
  q.request.gang.workers = 1;
  return std::make_shared<const QueuedJob>(std::move(q));
}

scheduler::JobSnapshot Snapshot(const std::string& key, bool running,
                                std::optional<int64_t> time_limit = std::nullopt) {
  scheduler::JobSnapshot js;
  js.request.name = key;
  js.request.time_limit = time_limit;
  js.start_time = kNow - 100;
  if (running) js.placement = scheduler::Placement{{"n1"}};
  return js;
}

TEST(StartEstimatesTest, ARunningJobEndsWhenItsProgressSaysElseAtItsTimeLimitElseUnknown) {
  StepRates rates;
  // ns/fast: 100 of 1,000 steps, then 200 ten seconds later: 10 steps/s, 800 steps to go.
  ObserveProgress({Running("fast", 100, 1000, kNow - 10)}, rates);
  std::vector<QueuedJobPtr> jobs = {Running("fast", 200, 1000, kNow),
                                    Running("no-total", 200, std::nullopt, kNow),
                                    Running("no-rate", 5, 100, kNow)};
  ObserveProgress(jobs, rates);
  QueueSnapshot snap;
  snap.jobs = {Snapshot("ns/fast", true, 3600), Snapshot("ns/no-total", true, 3600),
               Snapshot("ns/no-rate", true), Snapshot("ns/waiting", false, 60)};
  std::vector<scheduler::EstimateJob> in = EstimateInputs(snap, jobs, rates);
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[0].end.basis, scheduler::EstimateBasis::kProgress);
  EXPECT_EQ(in[0].end.time, kNow + 80);
  EXPECT_EQ(in[1].end.basis, scheduler::EstimateBasis::kTimeLimit);  // no total steps
  EXPECT_EQ(in[1].end.time, kNow - 100 + 3600);
  EXPECT_EQ(in[2].end.basis, scheduler::EstimateBasis::kUnknown);  // one report, no limit
  EXPECT_FALSE(in[2].end.time);
  EXPECT_FALSE(in[3].job.placement);  // waiting: its time limit is the queue's to use
}

TEST(StartEstimatesTest, ObserveProgressForgetsJobsThatStoppedRunning) {
  StepRates rates;
  ObserveProgress({Running("a", 0, 10, kNow - 10), Running("b", 0, 10, kNow - 10)}, rates);
  ObserveProgress({Running("a", 10, 10, kNow)}, rates);
  EXPECT_EQ(rates.size(), 1u);
  EXPECT_DOUBLE_EQ(*rates.Rate("ns/a"), 1.0);
}

}  // namespace
}  // namespace dljob::controller
