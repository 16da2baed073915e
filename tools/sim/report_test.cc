#include "tools/sim/report.h"

#include <gtest/gtest.h>

namespace dljob::scheduler::sim {
namespace {

Summary Row(const std::string& policy, double jct) {
  Summary s;
  s.policy = policy;
  s.jobs = 4;
  s.finished = 4;
  s.avg_jct = jct;
  s.p95_jct = 497;
  s.avg_wait = 74;
  s.p95_wait = 197;
  s.makespan = 9000;
  s.gpu_allocation = 0.625;
  s.gpu_allocation_queued = 0.875;
  s.fragmentation = 0.25;
  s.preemptions = 3;
  s.wall_seconds = 0.04;
  return s;
}

TEST(HumanSeconds, UnitsByMagnitude) {
  EXPECT_EQ(HumanSeconds(95), "95s");
  EXPECT_EQ(HumanSeconds(2712), "45.2m");
  EXPECT_EQ(HumanSeconds(44424), "12.34h");
}

TEST(FormatTable, OneAlignedRowPerPolicy) {
  EXPECT_EQ(FormatTable({Row("fifo", 264), Row("best-fit", 211.5)}),
            "policy    jobs  done  avg JCT  p95 JCT  avg wait  p95 wait  makespan  GPU alloc  "
            "alloc queued   frag  preempt  wall\n"
            "fifo         4     4     4.4m     8.3m       74s      3.3m     2.50h      62.5%  "
            "       87.5%  25.0%        3  0.0s\n"
            "best-fit     4     4     3.5m     8.3m       74s      3.3m     2.50h      62.5%  "
            "       87.5%  25.0%        3  0.0s\n");
}

// A job ended by its time limit counts as done with the kill as its end: the table says how many,
// once any replay had one (elastic jobs on their minimum can outrun a limit set for their max).
TEST(FormatTable, DeadlineColumnWhenSomeJobHitItsTimeLimit) {
  Summary killed = Row("dljob", 264);
  killed.deadline_exceeded = 2;
  EXPECT_EQ(FormatTable({Row("fifo", 264), killed}),
            "policy  jobs  done  deadline  avg JCT  p95 JCT  avg wait  p95 wait  makespan  "
            "GPU alloc  alloc queued   frag  preempt  wall\n"
            "fifo       4     4         0     4.4m     8.3m       74s      3.3m     2.50h  "
            "    62.5%         87.5%  25.0%        3  0.0s\n"
            "dljob      4     4         2     4.4m     8.3m       74s      3.3m     2.50h  "
            "    62.5%         87.5%  25.0%        3  0.0s\n");
}

TEST(SummaryJson, TheKeysPerPolicyInOrder) {
  nlohmann::ordered_json j = SummaryJson({Row("fifo", 261), Row("dljob", 211.5)});
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j.begin().key(), "fifo");
  std::vector<std::string> keys;
  for (auto it = j["dljob"].begin(); it != j["dljob"].end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"avg_jct", "p95_jct", "avg_wait", "p95_wait",
                                            "makespan", "gpu_allocation", "preemptions",
                                            "gpu_allocation_queued", "fragmentation", "jobs",
                                            "finished", "deadline_exceeded", "wall_seconds"}));
  EXPECT_EQ(j["dljob"]["avg_jct"], 211.5);
  EXPECT_EQ(j["dljob"]["makespan"], 9000);
}

TEST(JobsOutCsv, OneRowPerPolicyAndJob) {
  Trace t;
  t.jobs = {TraceJob{"a", 10, 50, 2, 2, "q", 1, "", std::nullopt, std::nullopt},
            TraceJob{"b", 20, 30, 1, 1, "default", 0, "", std::nullopt, std::nullopt}};
  SimResult r;
  r.policy = "las";
  r.jobs = {{10, 60, 50, 0, false}, {}};
  EXPECT_EQ(JobsOutCsv(t, {r}),
            "policy,name,submit_time,start_time,finish_time,jct,wait,num_gpu,queue,priority,"
            "preemptions,deadline_exceeded\n"
            "las,a,10,10,60,50,0,2,q,1,0,false\n"
            "las,b,20,,,,,1,default,0,0,false\n");
}

Summary Estimated(Summary s) {
  s.estimated = true;
  s.estimates = {40, 10, 330, 5400, 0.425, 60};
  s.at_submission = {30, 5, 600, 7200, 0.3, 120};
  s.estimated_jobs = 35;
  s.estimate_runs = 12;
  s.estimate_wall_seconds = 1.5;
  return s;
}

TEST(FormatTable, EstimateColumnsWhenAReplayScoredThem) {
  EXPECT_EQ(FormatTable({Estimated(Row("dljob", 264)), Row("fifo", 211.5)}),
            "policy  jobs  done  avg JCT  p95 JCT  avg wait  p95 wait  makespan  GPU alloc  "
            "alloc queued   frag  preempt  wall  est err p50  est err p90  est in 25%  "
            "est unknown\n"
            "dljob      4     4     4.4m     8.3m       74s      3.3m     2.50h      62.5%  "
            "       87.5%  25.0%        3  0.0s         5.5m        90.0m       42.5%        "
            "20.0%\n"
            "fifo       4     4     3.5m     8.3m       74s      3.3m     2.50h      62.5%  "
            "       87.5%  25.0%        3  0.0s            -            -           -            "
            "-\n");
}

TEST(SummaryJson, EstimatesOnlyWhereScored) {
  nlohmann::ordered_json j = SummaryJson({Estimated(Row("dljob", 261)), Row("fifo", 211.5)});
  EXPECT_FALSE(j["fifo"].contains("estimates"));
  const auto& e = j["dljob"]["estimates"];
  std::vector<std::string> keys;
  for (auto it = e.begin(); it != e.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"all", "at_submission", "jobs", "runs", "wall_seconds"}));
  EXPECT_EQ(e["all"], (nlohmann::ordered_json{{"count", 40},
                                              {"unknown", 10},
                                              {"median_error", 330.0},
                                              {"p90_error", 5400.0},
                                              {"within_25", 0.425},
                                              {"median_bias", 60.0}}));
  EXPECT_EQ(e["at_submission"]["median_error"], 600.0);
  EXPECT_EQ(e["jobs"], 35);
}

TEST(EventsOutCsv, OneRowPerEventByPolicy) {
  Trace t;
  t.jobs = {TraceJob{"a", 10, 50, 2, 2, "q", 1, "", std::nullopt, std::nullopt},
            TraceJob{"b", 20, 30, 1, 1, "default", 0, "", std::nullopt, std::nullopt}};
  SimResult r;
  r.policy = "dljob";
  r.events = {{10, 0, SimEventKind::kStart, 2, ""},
              {20, 0, SimEventKind::kShrink, 1, "b"},
              {20, 1, SimEventKind::kStart, 1, ""},
              {80, 0, SimEventKind::kDeadline, 0, ""}};
  SimResult rigid;
  rigid.policy = "fifo";
  rigid.events = {{30, 1, SimEventKind::kEnd, 0, ""}};
  EXPECT_EQ(EventsOutCsv(t, {r, rigid}),
            "policy,time,name,event,gpus,for_job\n"
            "dljob,10,a,start,2,\n"
            "dljob,20,a,shrink,1,b\n"
            "dljob,20,b,start,1,\n"
            "dljob,80,a,deadline,0,\n"
            "fifo,30,b,end,0,\n");
}

TEST(EstimatesOutCsv, OneRowPerEstimate) {
  Trace t;
  t.jobs = {TraceJob{"a", 10, 50, 2, 2, "q", 1, "", std::nullopt, std::nullopt},
            TraceJob{"b", 20, 30, 1, 1, "default", 0, "", std::nullopt, std::nullopt}};
  SimResult r;
  r.policy = "dljob";
  r.jobs = {{100, 150, 50, 0, false}, {}};
  r.estimates = {{{10, 90, EstimateBasis::kProgress}, {40, 130, EstimateBasis::kTimeLimit}},
                 {{20, std::nullopt, EstimateBasis::kUnknown}}};
  EXPECT_EQ(EstimatesOutCsv(t, {r}),
            "policy,name,submit_time,made_at,estimate,basis,start_time,error\n"
            "dljob,a,10,10,90,Progress,100,-10\n"
            "dljob,a,10,40,130,TimeLimit,100,30\n"
            "dljob,b,20,20,,Unknown,,\n");
}

TEST(AllocationSvg, AxesLegendAndOneLinePerPolicy) {
  SimResult a, b;
  a.policy = "fifo";
  a.total_gpus = 8;
  a.allocation = {{0, 4}, {3600, 8}, {7200, 0}};
  b.policy = "a<b";
  b.total_gpus = 8;
  b.allocation = {{0, 8}, {7200, 0}};
  const std::string svg = AllocationSvg({a, b}, 4);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  EXPECT_NE(svg.find(">simulated time (hours)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">GPUs allocated (% of all)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">fifo</text>"), std::string::npos);
  EXPECT_NE(svg.find(">a&lt;b</text>"), std::string::npos);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u);
  // fifo's buckets (0.5 h each over 2 h): 50%, 50%, 100%, 100% of the plot's height (y 40..420).
  EXPECT_NE(svg.find("points=\"161.2,230.0 343.8,230.0 526.2,40.0 708.8,40.0 \""),
            std::string::npos)
      << svg;
}

}  // namespace
}  // namespace dljob::scheduler::sim
