#include "tools/sim/simulator.h"

#include <gtest/gtest.h>

#include "tools/sim/metrics.h"
#include "tools/sim/sim_test_util.h"
#include "tools/sim/trace_gen.h"

namespace dljob::scheduler::sim {
namespace {

Trace Tiny() {
  Trace t;
  t.nodes = *ParseNodes("n", testing::kTinyNodes);
  t.jobs = *ParseJobs("j", testing::kTinyJobs);
  return t;
}

SimResult Replay(const Trace& t, const std::string& policy, SimOptions options = {}) {
  Result<SimPolicy> p = SimPolicyByName(policy, options);
  EXPECT_TRUE(p.ok()) << p.status().message();
  Result<SimResult> r = Simulate(t, *p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

std::vector<std::optional<int64_t>> Finishes(const SimResult& r) {
  std::vector<std::optional<int64_t>> out;
  for (const JobOutcome& o : r.jobs) out.push_back(o.finish);
  return out;
}

TEST(Simulate, TinyTraceFifoAgainstDljobByHand) {
  const Trace t = Tiny();
  SimResult fifo = Replay(t, "fifo");
  SimResult dljob = Replay(t, "dljob");
  using F = std::vector<std::optional<int64_t>>;
  EXPECT_EQ(Finishes(fifo), (F{100, 200, 250, 500}));
  EXPECT_EQ(Finishes(dljob), (F{100, 200, 52, 500}));
  EXPECT_EQ(dljob.jobs[2].first_start, 2);
  Summary f = Summarize(t, fifo), d = Summarize(t, dljob);
  EXPECT_DOUBLE_EQ(f.avg_jct, 261);
  EXPECT_DOUBLE_EQ(d.avg_jct, 211.5);
  EXPECT_DOUBLE_EQ(f.avg_wait, 123.5);
  EXPECT_DOUBLE_EQ(d.avg_wait, 74);
  EXPECT_DOUBLE_EQ(f.p95_jct, 497);
  EXPECT_EQ(f.makespan, 500);
  EXPECT_EQ(d.makespan, 500);
  EXPECT_DOUBLE_EQ(f.gpu_allocation, 0.625);
  EXPECT_DOUBLE_EQ(d.gpu_allocation, 0.625);
  EXPECT_EQ(f.preemptions, 0);
  EXPECT_EQ(f.finished, 4);
  // The allocation step function of fifo: 4, 8, 6, 4, 0 GPUs.
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (const AllocationPoint& p : fifo.allocation) steps.emplace_back(p.time, p.gpus);
  EXPECT_EQ(steps, (std::vector<std::pair<int64_t, int64_t>>{
                       {0, 4}, {100, 8}, {200, 6}, {250, 4}, {500, 0}}));
}

TEST(Simulate, LasSuspendsAndTheJobResumesAfterTheOverhead) {
  Trace t;
  t.nodes = *ParseNodes("n", "name,num_gpu\nn1,1\n");
  t.jobs = *ParseJobs("j", "name,submit_time,duration,num_gpu\nlong,0,1000,1\nshort,10,20,1\n");
  SimOptions o;
  o.las_thresholds = {100};
  o.min_run_time = 30;
  o.preemption_overhead = 5;
  SimResult r = Replay(t, "las", o);
  // long reaches level 1 at t=100 and is suspended; short runs 100–120; long resumes at 120,
  // restores for 5 s and runs its last 900 s.
  EXPECT_EQ(r.jobs[1].first_start, 100);
  EXPECT_EQ(r.jobs[1].finish, 120);
  EXPECT_EQ(r.jobs[0].finish, 1025);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.jobs[0].held, 1005);
  EXPECT_EQ(r.preemptions, 1);
  Summary s = Summarize(t, r);
  EXPECT_DOUBLE_EQ(s.avg_wait, (20 + 90) / 2.0);
}

TEST(Simulate, ARunEndsAtItsTimeLimit) {
  Trace t;
  t.nodes = *ParseNodes("n", "name,num_gpu\nn1,1\n");
  t.jobs = *ParseJobs("j", "name,submit_time,duration,num_gpu,time_limit\nover,0,100,1,60\n");
  SimResult r = Replay(t, "dljob");
  EXPECT_EQ(r.jobs[0].finish, 60);
  EXPECT_TRUE(r.jobs[0].deadline_exceeded);
  EXPECT_EQ(Summarize(t, r).deadline_exceeded, 1);
}

TEST(Simulate, JobsThatCanNeverRunAreReportedNotWaitedFor) {
  Trace t;
  t.nodes = *ParseNodes("n", "name,num_gpu,gpu_model\nn1,8,A100\n");
  t.jobs = *ParseJobs("j",
                      "name,submit_time,duration,num_gpu,gpu_model,queue\n"
                      "ok,0,10,8,,\n"
                      "huge,0,10,16,,\n"
                      "t4,0,10,1,T4,\n");
  t.queues = {UnlimitedQueue("default")};
  for (const std::string_view policy : SimPolicyNames()) {
    SimResult r = Replay(t, std::string(policy));
    EXPECT_EQ(r.jobs[1].finish, 10) << policy;  // ok (sorted: huge, ok, t4)
    EXPECT_FALSE(r.jobs[0].finish) << policy;
    EXPECT_FALSE(r.jobs[2].finish) << policy;
    EXPECT_EQ(Summarize(t, r).finished, 1);
  }
}

// A generated trace of a few hundred jobs: under every policy every job ends, and the same input
// gives the same result.
TEST(Simulate, EveryPolicyFinishesEveryJobDeterministically) {
  TraceShape shape;
  shape.jobs = 400;
  shape.gpus = 256;
  shape.seed = 3;
  Trace t = GenerateTrace(shape);
  for (const std::string_view policy : SimPolicyNames()) {
    SimResult a = Replay(t, std::string(policy));
    SimResult b = Replay(t, std::string(policy));
    Summary s = Summarize(t, a);
    EXPECT_EQ(s.finished, shape.jobs) << policy;
    EXPECT_EQ(Finishes(a), Finishes(b)) << policy;
    // Diluted by the days-long tail jobs that run alone at the end; high while jobs queue.
    EXPECT_GT(s.gpu_allocation, 0.05) << policy;
    EXPECT_GT(s.gpu_allocation_queued, 0.5) << policy;
    EXPECT_LE(s.gpu_allocation_queued, 1.0) << policy;
    EXPECT_LE(s.gpu_allocation, 1.0) << policy;
    for (const AllocationPoint& p : a.allocation) EXPECT_LE(p.gpus, a.total_gpus);
  }
}

// 300 generated jobs on 16 nodes: a queue builds, so jobs wait and get estimates.
Trace QueuingTrace() {
  TraceShape shape;
  shape.jobs = 300;
  shape.gpus = 128;
  shape.seed = 5;
  return GenerateTrace(shape);
}

SimOptions WithEstimates(double noise = 0) {
  SimOptions o;
  o.estimates = EstimateScoring{};
  o.estimates->noise = noise;
  return o;
}

// The tiny trace's estimates by hand (sim_test_util.h). fifo: at j2's submission j1 runs until
// 100 (its true end, as a steady step rate reports it), so j2 starts at 100; j3 and j4 wait
// behind j2, which the estimate assumes runs to its time limit (100 + 200 = 300); j2 in fact
// ends at 200, so they start then. dljob: j3 backfills at once (no estimate: it never waited).
TEST(Simulate, EstimatesOfTheTinyTraceByHand) {
  const Trace t = Tiny();
  using R = std::vector<EstimateRecord>;
  SimResult fifo = Replay(t, "fifo", WithEstimates());
  ASSERT_EQ(fifo.estimates.size(), 4u);
  EXPECT_EQ(fifo.estimates[0], R{});  // j1 started at once
  EXPECT_EQ(fifo.estimates[1], (R{{1, 100, EstimateBasis::kProgress}}));
  EXPECT_EQ(fifo.estimates[2], (R{{2, 300, EstimateBasis::kTimeLimit}}));
  EXPECT_EQ(fifo.estimates[3], (R{{3, 300, EstimateBasis::kTimeLimit}}));
  EXPECT_GE(fifo.estimate_runs, 3);
  SimResult dljob = Replay(t, "dljob", WithEstimates());
  EXPECT_EQ(dljob.estimates[1], (R{{1, 100, EstimateBasis::kProgress}}));
  EXPECT_EQ(dljob.estimates[2], R{});
  EXPECT_EQ(dljob.estimates[3], (R{{3, 300, EstimateBasis::kTimeLimit}}));
  Summary f = Summarize(t, fifo);
  ASSERT_TRUE(f.estimated);
  EXPECT_EQ(f.estimated_jobs, 3);
  EXPECT_EQ(f.estimates.count, 3);
  EXPECT_EQ(f.estimates.unknown, 0);
  EXPECT_DOUBLE_EQ(f.estimates.median_error, 100);  // errors 0, 100, 100
  EXPECT_DOUBLE_EQ(f.estimates.within_25, 1.0 / 3);
  EXPECT_DOUBLE_EQ(f.estimates.median_bias, 100);  // late: j2 ended before its time limit
}

// Estimating is a side line: every outcome of the replay is the same with it as without, under
// every policy; the estimates of jobs that waited are recorded, and are the same again.
TEST(Simulate, EstimatesChangeNothingAndRepeat) {
  const Trace t = QueuingTrace();
  for (const std::string_view policy : SimPolicyNames()) {
    SCOPED_TRACE(policy);
    SimResult plain = Replay(t, std::string(policy));
    SimResult scored = Replay(t, std::string(policy), WithEstimates());
    SimResult again = Replay(t, std::string(policy), WithEstimates());
    EXPECT_TRUE(plain.estimates.empty());
    EXPECT_FALSE(Summarize(t, plain).estimated);
    EXPECT_EQ(Finishes(scored), Finishes(plain));
    EXPECT_EQ(scored.preemptions, plain.preemptions);
    EXPECT_EQ(scored.estimates, again.estimates);
    const Summary s = Summarize(t, scored);
    EXPECT_GT(s.estimated_jobs, 10);
    EXPECT_GT(s.estimates.count, s.estimated_jobs / 2);
    for (size_t i = 0; i < t.jobs.size(); ++i) {
      for (const EstimateRecord& e : scored.estimates[i]) {
        ASSERT_TRUE(scored.jobs[i].first_start);
        EXPECT_LT(e.made_at, *scored.jobs[i].first_start) << t.jobs[i].name;
        EXPECT_GE(e.made_at, t.jobs[i].submit_time) << t.jobs[i].name;
        if (e.time) {
          EXPECT_GE(*e.time, e.made_at) << t.jobs[i].name;
        }
      }
    }
  }
}

// Scoring every other job: only those have estimates, and the first of each is the one made at
// its submission, as when every job is scored.
TEST(Simulate, EstimatesOfASampleOfTheJobs) {
  const Trace t = QueuingTrace();
  SimResult all = Replay(t, "dljob", WithEstimates());
  SimOptions o = WithEstimates();
  o.estimates->sample = 2;
  SimResult half = Replay(t, "dljob", o);
  int compared = 0;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    if (i % 2) {
      EXPECT_TRUE(half.estimates[i].empty()) << t.jobs[i].name;
      continue;
    }
    ASSERT_EQ(half.estimates[i].empty(), all.estimates[i].empty()) << t.jobs[i].name;
    if (half.estimates[i].empty()) continue;
    EXPECT_EQ(half.estimates[i].front(), all.estimates[i].front()) << t.jobs[i].name;
    EXPECT_EQ(half.estimates[i].front().made_at, t.jobs[i].submit_time) << t.jobs[i].name;
    ++compared;
  }
  EXPECT_GT(compared, 20);
  EXPECT_LT(half.estimate_runs, all.estimate_runs);
}

// With noise, running jobs report a remaining time off by up to ±50%: the estimates differ from
// the exact ones, the same seed repeats them, and the replay itself is unchanged.
TEST(Simulate, NoisyProgressReports) {
  const Trace t = QueuingTrace();
  SimResult exact = Replay(t, "dljob", WithEstimates());
  SimResult noisy = Replay(t, "dljob", WithEstimates(0.5));
  SimResult again = Replay(t, "dljob", WithEstimates(0.5));
  EXPECT_EQ(Finishes(noisy), Finishes(exact));
  EXPECT_NE(noisy.estimates, exact.estimates);
  EXPECT_EQ(noisy.estimates, again.estimates);
}

TEST(SimPolicyByName, UnknownNamesTheKnownOnes) {
  EXPECT_EQ(SimPolicyByName("lifo", {}).status().message(),
            "unknown policy \"lifo\" (known: fifo, spread, best-fit, dljob, las, sjf)");
}

}  // namespace
}  // namespace dljob::scheduler::sim
