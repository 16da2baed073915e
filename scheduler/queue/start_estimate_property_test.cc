// Property tests of start-time estimates over random clusters mid-run (fixed seeds), for every
// queue variant: when every run lasts exactly as the estimate assumed, each estimate is the start
// the queue then gives the job (queue_testing::Replay, an event loop of its own); no estimate is
// before now, nor (without preemption) before enough GPUs could be free given the running jobs'
// ends; a job gets "now" exactly when a pass at now starts it; and the same input, in any order,
// gives the same estimates.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "scheduler/queue/queue_test_util.h"
#include "scheduler/queue/start_estimate.h"

namespace dljob::scheduler {
namespace {

using queue_testing::kVariants;
using queue_testing::MakeTrace;
using queue_testing::OptionsOf;
using queue_testing::Policy;
using queue_testing::RandomTrace;
using queue_testing::Variant;

constexpr int64_t kNow = 1000;
constexpr int64_t kNever = int64_t{1} << 49;  // Replay runs a job with no end this long

// A random cluster at kNow: about half the jobs of a random trace running (started by a greedy
// pass, since random times before now), the rest waiting. A running job ends by its progress, its
// time limit or (with `unknown_ends`, one in eight) never; a waiting job runs its duration (as a
// suspended job's progress would say) or its time limit.
struct Scenario {
  std::vector<Node> nodes;
  std::vector<QueueSpec> queues;
  std::vector<EstimateJob> jobs;
  queue_testing::ReplayStart start;  // the same runs, for queue_testing::Replay
  std::set<std::string> waiting;
};

Scenario MakeScenario(uint32_t seed, bool quotas, bool unknown_ends, const PlacementPolicy& p) {
  std::mt19937 rng(seed * 7919 + 13);
  RandomTrace t = MakeTrace(seed, quotas);
  Scenario s;
  s.queues = t.queues;
  s.start.now = kNow;
  QueueOptions greedy;
  greedy.backfill = Backfill::kGreedy;
  greedy.preemption = false;
  JobQueue filler(t.queues, p, greedy);
  filler.SetNodes(t.nodes);
  std::map<std::string, JobRequest> by_name;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    JobRequest& r = t.jobs[i];
    if (unknown_ends && rng() % 8 == 0) r.time_limit.reset();
    by_name[r.name] = r;
    if (i % 2 == 0) {
      EXPECT_TRUE(filler.AddPending(r).ok());
    }
  }
  std::set<std::string> running;
  for (const StartAction& st : filler.Schedule(0).start) {
    const JobRequest& r = by_name[st.job];
    // Started within its time limit, so that it still runs (a run ends at its time limit).
    const int64_t start =
        kNow - int64_t(rng() % std::min<int64_t>(400, r.time_limit.value_or(400)));
    std::optional<int64_t> progress;
    if (rng() % 2 || (!r.time_limit && !unknown_ends)) progress = kNow + 1 + int64_t(rng() % 300);
    const ExpectedEnd end = ExpectedEndOf(r, start, progress);
    s.jobs.push_back({{r, {}, st.placement, start}, end, std::nullopt});
    s.start.running_ends[r.name] = end.time;
    running.insert(r.name);
  }
  for (const JobRequest& r : t.jobs) {
    if (running.count(r.name)) continue;
    std::optional<int64_t> run;
    if (rng() % 2 || !r.time_limit) run = r.duration;
    s.jobs.push_back({{r, {}, std::nullopt, 0}, {}, run});
    s.start.pending_runs[r.name] =
        r.time_limit && (!run || *r.time_limit < *run) ? *r.time_limit : *run;
    s.waiting.insert(r.name);
  }
  s.nodes = filler.nodes();
  return s;
}

StartEstimates Estimate(const Scenario& s, const PlacementPolicy& p, const QueueOptions& o) {
  Result<StartEstimates> e = EstimateStarts(s.queues, s.jobs, s.nodes, kNow, p, o);
  EXPECT_TRUE(e.ok()) << e.status().message();
  EXPECT_FALSE(e->capped);
  return e.ok() ? *e : StartEstimates{};
}

std::unique_ptr<JobQueue> QueueOf(const Scenario& s, const PlacementPolicy& p,
                                  const QueueOptions& o) {
  auto q = std::make_unique<JobQueue>(s.queues, p, o);
  q->SetNodes(s.nodes);
  for (const EstimateJob& j : s.jobs) {
    const JobSnapshot& js = j.job;
    Status st = js.placement ? q->AddRunning(js.request, *js.placement, js.start_time)
                             : q->AddPending(js.request);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  return q;
}

TEST(StartEstimateProperty, EachEstimateIsTheStartWhenRunsLastAsAssumed) {
  int estimated = 0, unknown = 0, later = 0;
  for (const char* placement : {"first-fit", "dljob"}) {
    auto policy = Policy(placement);
    for (uint32_t seed = 1; seed <= 60; ++seed) {
      Scenario s = MakeScenario(seed, seed % 2, seed % 3 == 0, *policy);
      for (const Variant& v : kVariants) {
        SCOPED_TRACE(std::string(placement) + " " + v.name + " seed " + std::to_string(seed));
        const QueueOptions o = OptionsOf(v, false);
        StartEstimates e = Estimate(s, *policy, o);
        auto q = QueueOf(s, *policy, o);
        auto actual = queue_testing::Replay(
            *q, {}, [](const JobQueue&, const Decision&, int64_t, const std::set<std::string>&) {},
            s.start);
        ASSERT_EQ(e.jobs.size(), s.waiting.size());
        for (const StartEstimate& est : e.jobs) {
          const std::optional<int64_t> started = actual[est.job].first_start;
          if (est.time) {
            ++estimated;
            later += *est.time > kNow;
            EXPECT_EQ(started, est.time) << est.job << ": " << est.assumption;
            EXPECT_NE(est.basis, EstimateBasis::kUnknown) << est.job;
          } else {
            ++unknown;
            EXPECT_TRUE(!started || *started >= kNever)
                << est.job << " started at " << *started << ": " << est.assumption;
            EXPECT_EQ(est.basis, EstimateBasis::kUnknown) << est.job;
            EXPECT_EQ(est.assumption.rfind("unknown: ", 0), 0u) << est.assumption;
          }
        }
      }
    }
  }
  // The scenarios exercise every outcome.
  EXPECT_GT(later, 1000);
  EXPECT_GT(estimated - later, 100);
  EXPECT_GT(unknown, 50);
}

// No estimate before now; without preemption, none before the running jobs' ends (as expected)
// leave as many GPUs free as the job needs; and a job gets "now" exactly when a pass at now
// starts it.
TEST(StartEstimateProperty, NeverEarlierThanThePlanAllows) {
  auto policy = Policy("first-fit");
  int bounded = 0;
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    Scenario s = MakeScenario(seed, false, seed % 2 == 0, *policy);
    int64_t total = 0;
    for (const Node& n : s.nodes) total += n.allocatable.gpus;
    std::vector<std::pair<int64_t, int64_t>> frees;  // (end, GPUs), unknown ends never
    for (const EstimateJob& j : s.jobs) {
      if (j.job.placement)
        frees.push_back({j.end.time.value_or(kNever), GangGpus(j.job.request.gang)});
    }
    std::sort(frees.begin(), frees.end());
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(std::string(v.name) + " seed " + std::to_string(seed));
      const QueueOptions o = OptionsOf(v, false);
      StartEstimates e = Estimate(s, *policy, o);
      Result<Decision> d = ScheduleSnapshot(
          s.queues,
          [&] {
            std::vector<JobSnapshot> snap;
            for (const EstimateJob& j : s.jobs) snap.push_back(j.job);
            return snap;
          }(),
          s.nodes, kNow, *policy, o);
      ASSERT_TRUE(d.ok());
      std::set<std::string> started_now;
      for (const StartAction& st : d->start) started_now.insert(st.job);
      std::map<std::string, int64_t> gpus;
      for (const EstimateJob& j : s.jobs) gpus[j.job.request.name] = GangGpus(j.job.request.gang);
      for (const StartEstimate& est : e.jobs) {
        const bool now = est.time == kNow;
        EXPECT_EQ(now, started_now.count(est.job) == 1) << est.job << ": " << est.assumption;
        EXPECT_EQ(now, est.basis == EstimateBasis::kNow) << est.job;
        if (!est.time) continue;
        EXPECT_GE(*est.time, kNow) << est.job;
        if (v.preemption) continue;
        // The earliest time the running jobs' ends leave gpus[job] free.
        int64_t free = total;
        for (const auto& [end, g] : frees) free -= g;
        int64_t earliest = kNow;
        for (size_t i = 0; free < gpus[est.job] && i < frees.size(); ++i) {
          free += frees[i].second;
          earliest = frees[i].first;
        }
        EXPECT_GE(*est.time, earliest) << est.job << ": " << est.assumption;
        ++bounded;
      }
    }
  }
  EXPECT_GT(bounded, 1000);
}

TEST(StartEstimateProperty, SameInputInAnyOrderSameEstimates) {
  auto policy = Policy("dljob");
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    Scenario s = MakeScenario(seed, seed % 2, true, *policy);
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(std::string(v.name) + " seed " + std::to_string(seed));
      const QueueOptions o = OptionsOf(v, seed % 2);
      StartEstimates first = Estimate(s, *policy, o);
      StartEstimates again = Estimate(s, *policy, o);
      EXPECT_EQ(first.jobs, again.jobs);
      EXPECT_EQ(first.passes, again.passes);
      Scenario shuffled = s;
      std::mt19937 rng(seed);
      std::shuffle(shuffled.jobs.begin(), shuffled.jobs.end(), rng);
      StartEstimates other = Estimate(shuffled, *policy, o);
      auto by_name = [](std::vector<StartEstimate> v) {
        std::sort(v.begin(), v.end(),
                  [](const StartEstimate& a, const StartEstimate& b) { return a.job < b.job; });
        return v;
      };
      EXPECT_EQ(by_name(first.jobs), by_name(other.jobs));
    }
  }
}

}  // namespace
}  // namespace dljob::scheduler
