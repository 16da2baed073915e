// Start-time estimates, one case per kind of assumption: now, a running job's progress or time
// limit, a chain through jobs the estimate starts itself, a reservation, preemption, and each way
// an estimate stays unknown; and the helpers that turn progress into an expected end.
#include "scheduler/queue/start_estimate.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "scheduler/queue/queue_policy.h"
#include "scheduler/queue/queue_test_util.h"

namespace dljob::scheduler {
namespace {

using queue_testing::GpuNode;
using queue_testing::J;
using queue_testing::Policy;

constexpr int64_t kNow = 100000;

}  // namespace

std::ostream& operator<<(std::ostream& os, const StartEstimate& e) {
  return os << "{" << e.job << ", " << (e.time ? std::to_string(*e.time - kNow) : "none") << ", "
            << EstimateBasisName(e.basis) << ", \"" << e.assumption << "\"}";
}

namespace {

// Adds a job's usage to the nodes it runs on, as the operator's nodes count its pods.
void Occupy(std::vector<Node>& nodes, const JobRequest& job, const Placement& at) {
  for (const std::string& name : at.worker_nodes) {
    for (Node& n : nodes) {
      if (n.name != name) continue;
      n.used.gpus += job.gang.per_worker.gpus;
      n.used.cpu_milli += job.gang.per_worker.cpu_milli;
      n.used.memory_mib += job.gang.per_worker.memory_mib;
      n.used.pods += 1;
    }
  }
}

class Snapshot {
 public:
  explicit Snapshot(std::vector<Node> nodes) : nodes_(std::move(nodes)) {}
  // A job running on `at` since `start` that ends at `end` (basis) or never.
  Snapshot& Running(const JobRequest& job, std::vector<std::string> at, ExpectedEnd end,
                    int64_t start = kNow - 60) {
    Placement p{std::move(at)};
    Occupy(nodes_, job, p);
    jobs_.push_back({{job, {}, p, start}, end, std::nullopt});
    return *this;
  }
  Snapshot& Waiting(const JobRequest& job, std::optional<int64_t> run = std::nullopt) {
    jobs_.push_back({{job, {}, std::nullopt, 0}, {}, run});
    return *this;
  }
  StartEstimates Estimate(const std::string& policy = "dljob", int64_t min_run_time = 0,
                          EstimateOptions estimate = {},
                          std::vector<QueueSpec> queues = {UnlimitedQueue()}) const {
    Result<QueueOptions> o = QueueOptionsByName(policy);
    EXPECT_TRUE(o.ok());
    o->min_run_time = min_run_time;
    auto placement = Policy("first-fit");
    Result<StartEstimates> r =
        EstimateStarts(queues, jobs_, nodes_, kNow, *placement, *o, estimate);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : StartEstimates{};
  }

 private:
  std::vector<Node> nodes_;
  std::vector<EstimateJob> jobs_;
};

ExpectedEnd Progress(int64_t in) { return {kNow + in, EstimateBasis::kProgress}; }
ExpectedEnd Limit(int64_t in) { return {kNow + in, EstimateBasis::kTimeLimit}; }
const ExpectedEnd kNever{};

StartEstimate E(const std::string& job, std::optional<int64_t> in, EstimateBasis basis,
                const std::string& assumption) {
  return {job, in ? std::optional(kNow + *in) : std::nullopt, basis, assumption};
}

// Element by element, so that a failure prints the estimates (operator<< above).
void ExpectJobs(const StartEstimates& got, const std::vector<StartEstimate>& want) {
  ASSERT_EQ(got.jobs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.jobs[i], want[i]) << "estimate " << i;
}

TEST(StartEstimate, AJobThatFitsStartsNow) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)}).Waiting(J("a", 4)).Estimate();
  ASSERT_EQ(e.jobs.size(), 1u);
  EXPECT_EQ(e.jobs[0], E("a", 0, EstimateBasis::kNow, "now: it fits"));
  EXPECT_EQ(e.passes, 1);
}

TEST(StartEstimate, WhenARunningJobEndsByItsProgress) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Running(J("train-a", 8), {"n0"}, Progress(720))
                         .Waiting(J("b", 8))
                         .Estimate();
  ExpectJobs(e, std::vector{E("b", 720, EstimateBasis::kProgress,
                              "when train-a ends in about 12 min, from its steps and "
                              "images/sec")});
}

TEST(StartEstimate, WhenARunningJobReachesItsTimeLimit) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Running(J("train-a", 8), {"n0"}, Limit(7200))
                         .Waiting(J("b", 8))
                         .Estimate();
  ExpectJobs(e, std::vector{E("b", 7200, EstimateBasis::kTimeLimit,
                              "when train-a reaches its time limit in about 2 h")});
}

TEST(StartEstimate, AnEndAlreadyDueCountsAsNow) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Running(J("train-a", 8), {"n0"}, Progress(-30))
                         .Waiting(J("b", 8))
                         .Estimate();
  ExpectJobs(e, std::vector{E("b", 0, EstimateBasis::kProgress,
                              "when train-a ends, which its progress says is due now")});
}

TEST(StartEstimate, AChainThroughAJobTheEstimateStartsTakesItsWeakerBasis) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Running(J("r", 8), {"n0"}, Progress(600))
                         .Waiting(J("a", 8).At(1).Limit(3600))
                         .Waiting(J("b", 8).At(2))
                         .Waiting(J("c", 8).At(3), 1800)  // a suspended job: 30 min left
                         .Waiting(J("d", 8).At(4))
                         .Estimate();
  ExpectJobs(e, (std::vector{
                    E("a", 600, EstimateBasis::kProgress,
                      "when r ends in about 10 min, from its steps and images/sec"),
                    E("b", 4200, EstimateBasis::kTimeLimit,
                      "when a ends in about 1 h, if it runs to its time limit once started"),
                    E("c", std::nullopt, EstimateBasis::kUnknown,
                      "unknown: it waits for b, which reports no progress and has no time limit"),
                    E("d", std::nullopt, EstimateBasis::kUnknown,
                      "unknown: it waits for b, which reports no progress and has no time limit"),
                }));
}

TEST(StartEstimate, AResumedJobEndsByItsProgress) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Waiting(J("c", 8).At(1), 1800)
                         .Waiting(J("d", 8).At(2))
                         .Estimate();
  EXPECT_EQ(e.jobs[0], E("c", 0, EstimateBasis::kNow, "now: it fits"));
  EXPECT_EQ(e.jobs[1], E("d", 1800, EstimateBasis::kProgress,
                         "when c ends in about 30 min, from its steps and images/sec once "
                         "resumed"));
}

TEST(StartEstimate, BehindAReservation) {
  // big (16 GPUs) is first in line and reserves n0+n1 for when r2 and r3 end; small (8 GPUs, no
  // time limit) may not take n0 when r1 ends, since it would outlive the reservation.
  StartEstimates e = Snapshot({GpuNode("n0", 8), GpuNode("n1", 8), GpuNode("n2", 8)})
                         .Running(J("r1", 8), {"n0"}, Progress(600))
                         .Running(J("r2", 8), {"n1"}, Progress(3600))
                         .Running(J("r3", 8), {"n2"}, Progress(3600))
                         .Waiting(J("big", 16).At(1).Limit(7200))
                         .Waiting(J("small", 8).At(2))
                         .Estimate();
  ExpectJobs(e, (std::vector{
                    E("big", 3600, EstimateBasis::kProgress,
                      "when r2 (with 1 other job) ends in about 1 h, from its steps and "
                      "images/sec"),
                    E("small", 3600, EstimateBasis::kProgress,
                      "after the reservation of big, when r2 (with 1 other job) ends in "
                      "about 1 h, from its steps and images/sec"),
                }));
}

TEST(StartEstimate, BehindTheFirstJobInStrictOrder) {
  StartEstimates e = Snapshot({GpuNode("n0", 8), GpuNode("n1", 8)})
                         .Running(J("r1", 8), {"n0"}, Progress(600))
                         .Running(J("r2", 4), {"n1"}, Limit(1200))
                         .Waiting(J("big", 16).At(1).Limit(600))
                         .Waiting(J("small", 4).At(2))
                         .Estimate("fifo");
  ExpectJobs(e, (std::vector{
                    E("big", 1200, EstimateBasis::kTimeLimit,
                      "when r2 reaches its time limit in about 20 min"),
                    E("small", 1800, EstimateBasis::kTimeLimit,
                      "when big ends in about 30 min, if it runs to its time limit once "
                      "started"),
                }));
  // small would fit n1 now; in strict order it waits behind big, and starts with it when big's
  // turn comes on a bigger cluster.
  StartEstimates wide = Snapshot({GpuNode("n0", 8), GpuNode("n1", 8), GpuNode("n2", 8)})
                            .Running(J("r1", 8), {"n0"}, Progress(600))
                            .Running(J("r2", 8), {"n1"}, Progress(1200))
                            .Running(J("r3", 4), {"n2"}, Progress(1200))
                            .Waiting(J("big", 16).At(1))
                            .Waiting(J("small", 4).At(2))
                            .Estimate("fifo");
  EXPECT_EQ(wide.jobs[1].assumption,
            "after big (strict order), when r2 (with 1 other job) ends in about 20 min, from "
            "its steps and images/sec");
}

TEST(StartEstimate, ByPreemptingALowerPriorityJob) {
  Snapshot s = Snapshot({GpuNode("n0", 8)})
                   .Running(J("low", 8), {"n0"}, Progress(7200), kNow - 100)
                   .Waiting(J("high", 8).Priority(5));
  ExpectJobs(s.Estimate("dljob", 0),
             std::vector{E("high", 0, EstimateBasis::kNow, "now, by preempting low")});
  // With a minimum run time of 600 s, low may be preempted 500 s from now.
  ExpectJobs(s.Estimate("dljob", 600),
             std::vector{E("high", 500, EstimateBasis::kProgress,
                           "in about 8 min, when running jobs may be preempted, by preempting "
                           "low")});
}

TEST(StartEstimate, PreemptionAlsoPlansTheSuspendedJobsReturn) {
  // low is running now; the replay suspends it for high and resumes it afterwards with what its
  // run had left. The waiting job after both gets its estimate through that resumption.
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Running(J("low", 8).At(0), {"n0"}, Progress(1000), kNow - 100)
                         .Waiting(J("high", 8).Priority(5).At(1).Limit(600))
                         .Waiting(J("later", 8).At(2))
                         .Estimate("dljob", 0);
  EXPECT_EQ(e.jobs[0], E("high", 0, EstimateBasis::kNow, "now, by preempting low"));
  EXPECT_EQ(e.jobs[1], E("later", 1600, EstimateBasis::kTimeLimit,
                         "when low ends in about 27 min, from its steps and images/sec once "
                         "resumed"));
}

TEST(StartEstimate, NothingRunningReportsProgress) {
  StartEstimates e =
      Snapshot({GpuNode("n0", 8)}).Running(J("r", 8), {"n0"}, kNever).Waiting(J("b", 8)).Estimate();
  ExpectJobs(e, std::vector{E("b", std::nullopt, EstimateBasis::kUnknown,
                              "unknown: nothing running reports progress or has a time "
                              "limit")});
}

TEST(StartEstimate, WaitsForARunningJobWithNoExpectedEnd) {
  StartEstimates e = Snapshot({GpuNode("n0", 8), GpuNode("n1", 8)})
                         .Running(J("r1", 8), {"n0"}, Progress(60))
                         .Running(J("r2", 8), {"n1"}, kNever)
                         .Waiting(J("b", 16))
                         .Estimate();
  ExpectJobs(e, std::vector{E("b", std::nullopt, EstimateBasis::kUnknown,
                              "unknown: it waits for r2, which reports no progress and has "
                              "no time limit")});
}

TEST(StartEstimate, AJobThatCanNeverFit) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)}).Waiting(J("huge", 16)).Estimate();
  ExpectJobs(e, std::vector{E("huge", std::nullopt, EstimateBasis::kUnknown,
                              "unknown: it can never fit these nodes")});
}

TEST(StartEstimate, AJobWhoseQueueDoesNotExist) {
  StartEstimates e = Snapshot({GpuNode("n0", 8)}).Waiting(J("a", 1).Queue("nope")).Estimate();
  ExpectJobs(e,
             std::vector{E("a", std::nullopt, EstimateBasis::kUnknown,
                           "unknown: its queue does not exist or has no quota for its GPU model")});
}

TEST(StartEstimate, AJobThatNeverGetsQuota) {
  QueueSpec none{"team", {{"", {0, 0}}}};
  StartEstimates e = Snapshot({GpuNode("n0", 8)})
                         .Waiting(J("a", 1).Queue("team"))
                         .Estimate("dljob", 0, {}, {none});
  ExpectJobs(e, std::vector{E("a", std::nullopt, EstimateBasis::kUnknown,
                              "unknown: it does not start even once every job ahead of it "
                              "has ended")});
}

TEST(StartEstimate, WaitsForQuotaUntilAJobOfItsQueueEnds) {
  QueueSpec team{"team", {{"", {8, 0}}}};
  StartEstimates e = Snapshot({GpuNode("n0", 8), GpuNode("n1", 8)})
                         .Running(J("mine", 8).Queue("team"), {"n0"}, Progress(900))
                         .Waiting(J("a", 8).Queue("team"))
                         .Estimate("dljob", 0, {}, {team});
  ExpectJobs(e, std::vector{E("a", 900, EstimateBasis::kProgress,
                              "when mine ends in about 15 min, from its steps and "
                              "images/sec")});
}

TEST(StartEstimate, TheReplayIsCapped) {
  Snapshot s = Snapshot({GpuNode("n0", 8)})
                   .Running(J("r", 8), {"n0"}, Progress(60))
                   .Waiting(J("a", 8).At(1).Limit(60))
                   .Waiting(J("b", 8).At(2).Limit(60))
                   .Waiting(J("c", 8).At(3).Limit(60));
  EstimateOptions two;
  two.max_passes = 2;
  StartEstimates e = s.Estimate("dljob", 0, two);
  EXPECT_TRUE(e.capped);
  EXPECT_EQ(e.passes, 3);
  ASSERT_EQ(e.jobs.size(), 3u);
  EXPECT_EQ(e.jobs[1].time, kNow + 120);
  EXPECT_EQ(e.jobs[2], E("c", std::nullopt, EstimateBasis::kUnknown,
                         "unknown: further ahead than the estimate looks (3 scheduling passes)"));
  StartEstimates all = s.Estimate();
  EXPECT_FALSE(all.capped);
  EXPECT_EQ(all.jobs[2].time, kNow + 180);
}

TEST(StartEstimate, AnInvalidSnapshotIsRefused) {
  std::vector<EstimateJob> jobs = {{{J("a", 1), {}, std::nullopt, 0}, {}, std::nullopt},
                                   {{J("a", 1), {}, std::nullopt, 0}, {}, std::nullopt}};
  auto policy = Policy();
  Result<StartEstimates> r =
      EstimateStarts({UnlimitedQueue()}, jobs, {GpuNode("n0", 8)}, kNow, *policy, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists);
}

TEST(EndFromProgress, RemainingStepsAtTheStepRate) {
  EXPECT_EQ(EndFromProgress(300, 937, 2.0, 1000), 1000 + 319);  // 318.5 s, rounded up
  EXPECT_EQ(EndFromProgress(937, 937, 2.0, 1000), 1000);
  EXPECT_EQ(EndFromProgress(950, 937, 2.0, 1000), 1000);
  EXPECT_EQ(EndFromProgress(0, 100, 0.0, 1000), std::nullopt);
  EXPECT_EQ(EndFromProgress(0, 100, -1.0, 1000), std::nullopt);
  EXPECT_EQ(EndFromProgress(0, 100, std::nan(""), 1000), std::nullopt);
  EXPECT_EQ(EndFromProgress(0, 100, std::numeric_limits<double>::infinity(), 1000), std::nullopt);
  EXPECT_EQ(EndFromProgress(-1, 100, 1.0, 1000), std::nullopt);
  EXPECT_EQ(EndFromProgress(0, int64_t{1} << 60, 1e-9, 1000), std::nullopt);
}

TEST(ExpectedEndOf, ProgressThenTimeLimitThenUnknown) {
  JobRequest limited = J("a", 1).Limit(3600);
  JobRequest open = J("b", 1);
  EXPECT_EQ(ExpectedEndOf(limited, 100, 1000), (ExpectedEnd{1000, EstimateBasis::kProgress}));
  // The time limit stops a run its progress says would end later.
  EXPECT_EQ(ExpectedEndOf(limited, 100, 9000), (ExpectedEnd{3700, EstimateBasis::kTimeLimit}));
  EXPECT_EQ(ExpectedEndOf(limited, 100, std::nullopt),
            (ExpectedEnd{3700, EstimateBasis::kTimeLimit}));
  EXPECT_EQ(ExpectedEndOf(open, 100, 9000), (ExpectedEnd{9000, EstimateBasis::kProgress}));
  EXPECT_EQ(ExpectedEndOf(open, 100, std::nullopt), ExpectedEnd{});
}

TEST(AboutDuration, RoundsAsAPersonWould) {
  const std::pair<int64_t, const char*> cases[] = {
      {0, "under a minute"},  {59, "under a minute"},   {60, "about 1 min"},
      {89, "about 1 min"},    {90, "about 2 min"},      {720, "about 12 min"},
      {3599, "about 60 min"}, {3600, "about 1 h"},      {4200, "about 1 h"},
      {4800, "about 1.5 h"},  {7200, "about 2 h"},      {9000, "about 2.5 h"},
      {35999, "about 10 h"},  {36000, "about 10 h"},    {41400, "about 12 h"},
      {172799, "about 48 h"}, {172800, "about 2 days"}, {3 * 86400 + 43200, "about 4 days"},
  };
  for (const auto& [seconds, text] : cases) EXPECT_EQ(AboutDuration(seconds), text) << seconds;
}

TEST(EstimateBasis, NamesAndOrder) {
  EXPECT_EQ(EstimateBasisName(EstimateBasis::kNow), "Now");
  EXPECT_EQ(EstimateBasisName(EstimateBasis::kProgress), "Progress");
  EXPECT_EQ(EstimateBasisName(EstimateBasis::kTimeLimit), "TimeLimit");
  EXPECT_EQ(EstimateBasisName(EstimateBasis::kUnknown), "Unknown");
  EXPECT_EQ(Weaker(EstimateBasis::kProgress, EstimateBasis::kTimeLimit), EstimateBasis::kTimeLimit);
  EXPECT_EQ(Weaker(EstimateBasis::kNow, EstimateBasis::kProgress), EstimateBasis::kProgress);
}

}  // namespace
}  // namespace dljob::scheduler
