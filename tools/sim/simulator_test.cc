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

TEST(SimPolicyByName, UnknownNamesTheKnownOnes) {
  EXPECT_EQ(SimPolicyByName("lifo", {}).status().message(),
            "unknown policy \"lifo\" (known: fifo, spread, best-fit, dljob, las, sjf)");
}

}  // namespace
}  // namespace dljob::scheduler::sim
