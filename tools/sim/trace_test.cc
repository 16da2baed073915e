#include "tools/sim/trace.h"

#include <random>

#include <gtest/gtest.h>

#include "tools/sim/trace_gen.h"

namespace dljob::scheduler::sim {
namespace {

TEST(ParseNodes, ColumnsLabelsAndModel) {
  auto nodes = ParseNodes("n.csv",
                          "name,num_gpu,gpu_model,cpu_milli,memory_mib,labels\n"
                          "a,8,A100,96000,1024,dljob.io/rack=r1;topology.kubernetes.io/zone=z\n"
                          "b,4,,,,\n");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 2u);
  const Node& a = (*nodes)[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.allocatable, (Resources{8, 96000, 1024, 0}));
  EXPECT_EQ(a.labels,
            (std::map<std::string, std::string>{
                {kGpuProductLabel, "A100"}, {kDefaultRackLabel, "r1"}, {kZoneLabel, "z"}}));
  EXPECT_EQ((*nodes)[1].allocatable, (Resources{4, 0, 0, 0}));
  EXPECT_TRUE((*nodes)[1].labels.empty());
}

TEST(ParseJobs, DefaultsAndOrderBySubmitTime) {
  auto jobs = ParseJobs("j.csv",
                        "name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,"
                        "gpu_model,time_limit,notes\n"
                        "late,10,5,16,,,,,,ignored\n"
                        "b,0,60,2,1,team-a,3,V100,120,\n"
                        "a,0,1,1,,,,,,\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0], (TraceJob{"a", 0, 1, 1, 1, "default", 0, "", std::nullopt, std::nullopt}));
  EXPECT_EQ((*jobs)[1], (TraceJob{"b", 0, 60, 2, 1, "team-a", 3, "V100", 120, std::nullopt}));
  EXPECT_EQ((*jobs)[2],
            (TraceJob{"late", 10, 5, 16, 8, "default", 0, "", std::nullopt, std::nullopt}));
  JobRequest r = RequestOf((*jobs)[1]);
  EXPECT_EQ(r.gang.workers, 2);
  EXPECT_EQ(r.gang.per_worker.gpus, 1);
  EXPECT_EQ(r.gang.gpu_model, "V100");
  EXPECT_EQ(r.gang.node_selector.at(kGpuProductLabel), "V100");
  EXPECT_EQ(r.time_limit, 120);
  EXPECT_EQ(r.duration, 60);
}

// Each bad input and the exact error: file, line, column, field and why.
TEST(ParseTrace, BadInputNamesFileLineColumnAndWhy) {
  const std::string jobs_header = "name,submit_time,duration,num_gpu,gpus_per_worker\n";
  struct Case {
    std::string what, text, error;
  };
  const Case jobs[] = {
      {"not a number", jobs_header + "a,0,10,x,\n",
       "j.csv:2:8: num_gpu: expected a whole number, got \"x\""},
      {"zero GPUs", jobs_header + "a,0,10,0,\n",
       "j.csv:2:8: num_gpu: must be between 1 and 1048576, got 0"},
      {"negative time", jobs_header + "a,-5,10,1,\n",
       "j.csv:2:3: submit_time: must be between 0 and 1099511627776, got -5"},
      {"uneven workers", jobs_header + "a,0,10,6,4\n",
       "j.csv:2:10: gpus_per_worker: num_gpu 6 is not a multiple of 4"},
      {"duplicate", jobs_header + "a,0,10,1,\na,1,10,1,\n",
       "j.csv:3:1: name: \"a\" already named on line 2"},
      {"space in name", jobs_header + "a b,0,10,1,\n",
       "j.csv:2:1: name: must have no spaces or control characters, got \"a b\""},
      {"missing column", "name,submit_time,num_gpu\n",
       "j.csv:1:1: the header has no \"duration\" column (expected "
       "name,submit_time,duration,num_gpu, ...)"},
      {"short row", jobs_header + "a,0\n", "j.csv:2:3: duration: missing; expected a whole number"},
  };
  for (const Case& c : jobs) {
    auto r = ParseJobs("j.csv", c.text);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().message(), c.error) << c.what;
  }
  EXPECT_EQ(ParseNodes("n.csv", "name,num_gpu,labels\na,8,rack\n").status().message(),
            "n.csv:2:5: labels: expected key=value pairs separated by ';', got \"rack\"");
  EXPECT_EQ(ParseNodes("n.csv", "name,num_gpu\n").status().message(),
            "n.csv: no nodes (only a header)");
  EXPECT_EQ(ParseQueues("q.csv", "name,gpu_model,nominal\na,,8\na,,4\n").status().message(),
            "q.csv:3:3: gpu_model: queue a already has a quota for any model");
  EXPECT_EQ(ParseQueues("q.csv", "name,gpu_model,nominal\na,,lots\n").status().message(),
            "q.csv:2:4: nominal: expected a whole number, got \"lots\"");
  EXPECT_EQ(ParseQueues("q.csv", "name,gpu_model,nominal,cohort\na,,8,ml\na,A100,8,\n")
                .status()
                .message(),
            "q.csv:3:10: cohort: queue a is in cohort \"ml\" on line 2; every row of a queue "
            "names the same cohort");
  EXPECT_EQ(ParseQueues("q.csv", "name,cohort\na,\"m l\"\n").status().message(),
            "q.csv:2:3: cohort: must have no spaces or control characters, got \"m l\"");
  EXPECT_EQ(LoadTrace("/nonexistent/n.csv", "j.csv", "").status().message(),
            "cannot open \"/nonexistent/n.csv\": No such file or directory");
}

TEST(ParseQueues, QuotasPerModelUnlimitedAndDefaults) {
  auto q = ParseQueues("q.csv",
                       "name,gpu_model,nominal,borrowing_limit\n"
                       "b,A100,16,unlimited\n"
                       "b,,8,\n"
                       "a,,,\n");
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ((*q)[0], (QueueSpec{"a", {{"", {kUnlimited, 0}}}}));
  EXPECT_EQ((*q)[1], (QueueSpec{"b", {{"", {8, 0}}, {"A100", {16, kUnlimited}}}}));
}

TEST(ParseQueues, CohortsPerQueueEmptyForTheDefault) {
  auto q = ParseQueues("q.csv",
                       "name,gpu_model,nominal,borrowing_limit,cohort\n"
                       "a,A100,8,8,ml\n"
                       "a,,4,0,ml\n"
                       "b,,8,0,ml\n"
                       "c,,8,0,\n");
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->size(), 3u);
  EXPECT_EQ((*q)[0], (QueueSpec{"a", {{"", {4, 0}}, {"A100", {8, 8}}}, "ml"}));
  EXPECT_EQ((*q)[1], (QueueSpec{"b", {{"", {8, 0}}}, "ml"}));
  EXPECT_EQ((*q)[2], (QueueSpec{"c", {{"", {8, 0}}}}));
  // Written back with the cohort column, and read back the same; without cohorts, without it.
  EXPECT_EQ(ParseQueues("q", QueuesCsv(*q)).value(), *q);
  EXPECT_EQ(QueuesCsv({{"c", {{"", {8, 0}}}}}), "name,gpu_model,nominal,borrowing_limit\nc,,8,0\n");
}

TEST(QueuesFor, EveryQueueTheJobsNameUnlimitedWithoutAQueuesFile) {
  Trace t;
  t.jobs = {TraceJob{"a", 0, 1, 1, 1, "x", 0, "", std::nullopt, std::nullopt},
            TraceJob{"b", 0, 1, 1, 1, "y", 0, "", std::nullopt, std::nullopt}};
  std::vector<QueueSpec> q = QueuesFor(t);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0], UnlimitedQueue("default"));
  EXPECT_EQ(q[1], UnlimitedQueue("x"));
  t.queues = {UnlimitedQueue("only")};
  EXPECT_EQ(QueuesFor(t), t.queues);
}

TEST(TraceCsv, WrittenFilesReadBackTheSame) {
  TraceShape shape;
  shape.jobs = 300;
  shape.gpus = 160;
  Trace t = GenerateTrace(shape);
  auto nodes = ParseNodes("n", NodesCsv(t.nodes));
  auto jobs = ParseJobs("j", JobsCsv(t.jobs));
  auto queues = ParseQueues("q", QueuesCsv(t.queues));
  ASSERT_TRUE(nodes.ok() && jobs.ok() && queues.ok());
  EXPECT_EQ(*nodes, t.nodes);
  EXPECT_EQ(*jobs, t.jobs);
  EXPECT_EQ(*queues, t.queues);
}

// Every truncation and every single-byte change of a valid jobs file (to bytes CSV and numbers
// care about) parses or fails with a located message; none crashes.
TEST(ParseJobs, EveryTruncationAndByteChangeFailsCleanly) {
  const std::string valid =
      "name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,gpu_model,time_limit\n"
      "a,0,100,4,4,team-a,1,A100,200\n"
      "\"b\",5,10,16,8,,,,\n";
  const std::string bytes = std::string(",\"\n\r -0x9") + '\0' + '\xff';
  int errors = 0;
  for (size_t i = 0; i <= valid.size(); ++i) {
    auto r = ParseJobs("j.csv", valid.substr(0, i));
    if (!r.ok()) {
      ++errors;
      EXPECT_EQ(r.status().message().rfind("j.csv", 0), 0u) << r.status().message();
    }
  }
  for (size_t i = 0; i < valid.size(); ++i) {
    for (char b : bytes) {
      std::string text = valid;
      text[i] = b;
      auto r = ParseJobs("j.csv", text);
      if (!r.ok()) {
        ++errors;
        EXPECT_EQ(r.status().message().rfind("j.csv", 0), 0u) << r.status().message();
      }
    }
  }
  EXPECT_GT(errors, 100);
  std::mt19937 rng(11);
  for (int i = 0; i < 5000; ++i) {
    std::string text = valid;
    for (int k = 0; k < 4; ++k) text[rng() % text.size()] = static_cast<char>(rng());
    (void)ParseJobs("j.csv", text);
    (void)ParseNodes("n.csv", text);
    (void)ParseQueues("q.csv", text);
  }
}

}  // namespace
}  // namespace dljob::scheduler::sim
