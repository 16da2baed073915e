// Elastic jobs in traces and in the simulator: the optional min_gpu/max_gpu columns, and small
// replays computed by hand where elastic beats rigid and where a shrink replaces a suspension.
#include <gtest/gtest.h>

#include "tools/sim/metrics.h"
#include "tools/sim/simulator.h"
#include "tools/sim/trace.h"
#include "tools/sim/trace_gen.h"

namespace dljob::scheduler::sim {
namespace {

constexpr char kHeader[] = "name,submit_time,duration,num_gpu,gpus_per_worker,min_gpu,max_gpu\n";

TEST(ElasticTrace, MinAndMaxColumnsAreOptional) {
  Result<std::vector<TraceJob>> jobs = ParseJobs(
      "j", std::string(kHeader) + "el,0,10,16,4,4,16\nel2,1,10,8,4,4,\nrigid,2,10,8,4,,\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ((*jobs)[0].min_gpu, 4);
  EXPECT_EQ((*jobs)[1].min_gpu, 4);
  EXPECT_FALSE((*jobs)[2].min_gpu);
  EXPECT_EQ(RequestOf((*jobs)[0]).elastic, (ElasticRange{1, 4}));
  EXPECT_FALSE(RequestOf((*jobs)[2]).elastic);
  // Written back with the elastic columns, read back the same; a rigid trace without them.
  EXPECT_EQ(*ParseJobs("j", JobsCsv(*jobs)), *jobs);
  EXPECT_EQ(JobsCsv({(*jobs)[2]}).find("min_gpu"), std::string::npos);
}

TEST(ElasticTrace, BadRangesNameLineColumnAndWhy) {
  struct Case {
    const char* row;
    const char* error;
  };
  for (const Case& c : {
           Case{"el,0,10,16,4,6,16",
                "j:2:14: min_gpu: must be a multiple of gpus_per_worker (4), got 6"},
           Case{"el,0,10,16,4,32,16", "j:2:14: min_gpu: must be between 1 and 16, got 32"},
           Case{"el,0,10,16,4,0,16", "j:2:14: min_gpu: must be between 1 and 16, got 0"},
           Case{"el,0,10,16,4,4,8", "j:2:16: max_gpu: must equal num_gpu (16), got 8"},
           Case{"el,0,10,16,4,,16", "j:2:15: max_gpu: needs min_gpu"},
       }) {
    Result<std::vector<TraceJob>> jobs = ParseJobs("j", std::string(kHeader) + c.row + "\n");
    ASSERT_FALSE(jobs.ok()) << c.row;
    EXPECT_NE(jobs.status().message().find(c.error), std::string::npos)
        << c.row << ": " << jobs.status().message();
  }
}

TEST(ElasticTrace, GeneratorMarksAShareOfMultiWorkerJobsAndKeepsTheRest) {
  TraceShape shape;
  shape.jobs = 2000;
  shape.gpus = 512;
  const Trace rigid = GenerateTrace(shape);
  shape.elastic_share = 0.5;
  const Trace elastic = GenerateTrace(shape);
  ASSERT_EQ(rigid.jobs.size(), elastic.jobs.size());
  int64_t multi = 0, marked = 0;
  for (size_t i = 0; i < rigid.jobs.size(); ++i) {
    TraceJob j = elastic.jobs[i];
    if (j.num_gpu / j.gpus_per_worker >= 2) ++multi;
    if (j.min_gpu) {
      ++marked;
      EXPECT_GE(*j.min_gpu, j.gpus_per_worker);
      EXPECT_EQ(*j.min_gpu % j.gpus_per_worker, 0);
      EXPECT_LE(*j.min_gpu, std::max(j.gpus_per_worker, j.num_gpu / 4));
      // Its limit lets it run on its minimum throughout: the rigid limit scaled by max / min.
      ASSERT_TRUE(j.time_limit && rigid.jobs[i].time_limit);
      EXPECT_GE(*j.time_limit * *j.min_gpu, *rigid.jobs[i].time_limit * j.num_gpu);
      EXPECT_LT(*j.time_limit * *j.min_gpu, (*rigid.jobs[i].time_limit + 600) * j.num_gpu);
      EXPECT_EQ(*j.time_limit % 600, 0);
      j.time_limit = rigid.jobs[i].time_limit;
    }
    j.min_gpu.reset();
    EXPECT_EQ(j, rigid.jobs[i]);  // nothing else changes
  }
  EXPECT_GT(marked, multi / 3);
  EXPECT_LT(marked, multi * 2 / 3);
}

// On a generated trace that keeps a queue, elastic jobs mostly run on their minimum; their limits
// are set for that, so none is killed part-way (with limits set for their max, about a third
// were, and the kill counted as their finish).
TEST(ElasticTrace, GeneratedElasticJobsFinishWithinTheirLimits) {
  TraceShape shape;
  shape.jobs = 600;
  shape.gpus = 128;
  shape.elastic_share = 1;
  const Trace t = GenerateTrace(shape);
  Result<SimPolicy> p = SimPolicyByName("dljob", SimOptions{});
  ASSERT_TRUE(p.ok());
  Result<SimResult> r = Simulate(t, *p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  int64_t elastic = 0;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    if (!t.jobs[i].min_gpu) continue;
    ++elastic;
    EXPECT_FALSE(r->jobs[i].deadline_exceeded) << t.jobs[i].name;
  }
  EXPECT_GT(elastic, 20);
}

SimResult Replay(const Trace& t, const std::string& policy, SimOptions options) {
  Result<SimPolicy> p = SimPolicyByName(policy, options);
  EXPECT_TRUE(p.ok()) << p.status().message();
  Result<SimResult> r = Simulate(t, *p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

// Two nodes of 4 GPUs. `a` holds one node for 1000 s; `b` (8 GPUs, 2 workers of 4, elastic from
// 4) arrives at t=1. Rigid, b waits for a: 1000–1100. Elastic, b starts at once on one worker
// and does its 800 GPU-seconds at 4 GPUs: 1–201.
TEST(ElasticSim, StartsOnWhatIsFreeInsteadOfWaitingForItsMax) {
  Trace t;
  t.nodes = *ParseNodes("n", "name,num_gpu\nn1,4\nn2,4\n");
  t.jobs = *ParseJobs("j", std::string(kHeader) + "a,0,1000,4,4,,\nb,1,100,8,4,4,8\n");
  SimOptions o;
  SimResult elastic = Replay(t, "dljob", o);
  o.rigid = true;
  SimResult rigid = Replay(t, "dljob", o);
  EXPECT_EQ(rigid.jobs[1].first_start, 1000);
  EXPECT_EQ(rigid.jobs[1].finish, 1100);
  EXPECT_EQ(elastic.jobs[1].first_start, 1);
  EXPECT_EQ(elastic.jobs[1].finish, 201);
  EXPECT_LT(Summarize(t, elastic).avg_wait, Summarize(t, rigid).avg_wait);
  EXPECT_LT(Summarize(t, elastic).avg_jct, Summarize(t, rigid).avg_jct);
}

// `el` (8 GPUs, elastic from 4, 8,000 GPU-seconds) runs alone; at t=700 `hi` (priority 1, 4 GPUs,
// 100 s) arrives. el is shrunk to one worker, not suspended: 5,600 GPU-seconds done, 30 s to
// restart. hi runs 700–800; the free node is idle from 800, so at 1100 (grow_after 300) el
// grows back: (400 − 30) × 4 = 1,480 more done, 920 left at 8 GPUs after 30 s: it ends at
// 1100 + 30 + 115 = 1245. Rigid, el is suspended instead.
TEST(ElasticSim, ShrinksInsteadOfBeingSuspendedThenGrowsBack) {
  Trace t;
  t.nodes = *ParseNodes("n", "name,num_gpu\nn1,4\nn2,4\n");
  t.jobs = *ParseJobs("j",
                      "name,submit_time,duration,num_gpu,gpus_per_worker,priority,min_gpu\n"
                      "el,0,1000,8,4,0,4\nhi,700,100,4,4,1,\n");
  SimOptions o;
  o.resize_overhead = 30;
  o.grow_after = 300;
  SimResult r = Replay(t, "dljob", o);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.resizes, 2);
  EXPECT_EQ(r.jobs[0].resizes, 2);
  EXPECT_EQ(r.jobs[1].first_start, 700);
  EXPECT_EQ(r.jobs[1].finish, 800);
  EXPECT_EQ(r.jobs[0].finish, 1245);
  EXPECT_FALSE(r.jobs[0].deadline_exceeded);
  o.rigid = true;
  SimResult rigid = Replay(t, "dljob", o);
  EXPECT_EQ(rigid.preemptions, 1);
  EXPECT_EQ(rigid.resizes, 0);
  EXPECT_TRUE(r.events.empty());  // recorded only when asked for
}

// The same replay's events, as --events-out writes them: the shrink names the job it made room
// for, the grow none; GPUs after each event.
TEST(ElasticSim, RecordsEachStartResizeAndEnd) {
  Trace t;
  t.nodes = *ParseNodes("n", "name,num_gpu\nn1,4\nn2,4\n");
  t.jobs = *ParseJobs("j",
                      "name,submit_time,duration,num_gpu,gpus_per_worker,priority,min_gpu\n"
                      "el,0,1000,8,4,0,4\nhi,700,100,4,4,1,\n");
  SimOptions o;
  o.record_events = true;
  SimResult r = Replay(t, "dljob", o);
  EXPECT_EQ(r.events, (std::vector<SimEvent>{{0, 0, SimEventKind::kStart, 8, ""},
                                             {700, 0, SimEventKind::kShrink, 4, "hi"},
                                             {700, 1, SimEventKind::kStart, 4, ""},
                                             {800, 1, SimEventKind::kEnd, 0, ""},
                                             {1100, 0, SimEventKind::kGrow, 8, ""},
                                             {1245, 0, SimEventKind::kEnd, 0, ""}}));
}

}  // namespace
}  // namespace dljob::scheduler::sim
