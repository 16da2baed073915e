// dljob-sim as a user runs it: a tiny trace whose fifo and dljob results are computed by hand
// (sim_test_util.h), the JSON keys, the per-job CSV and SVG files, the trace generator, and the
// exit status and message for bad flags and bad files.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/command.h"
#include "tools/sim/sim_test_util.h"

namespace dljob::scheduler::sim {
namespace {

using dljob::testing::BinDir;
using dljob::testing::ReadFile;
using dljob::testing::RunCommand;
using dljob::testing::TempDir;

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class SimCli : public ::testing::Test {
 protected:
  void SetUp() override {
    Write(dir_.path() + "/nodes.csv", testing::kTinyNodes);
    Write(dir_.path() + "/jobs.csv", testing::kTinyJobs);
  }
  std::vector<std::string> Args(std::vector<std::string> more) {
    std::vector<std::string> argv = {BinDir() + "/dljob-sim", "--nodes", dir_.path() + "/nodes.csv",
                                     "--jobs", dir_.path() + "/jobs.csv"};
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  }
  TempDir dir_;
};

TEST_F(SimCli, JsonHasTheKeysAndTheHandComputedFigures) {
  auto r = RunCommand(Args({"--policy", "fifo,dljob", "-o", "json", "--jobs-out",
                            dir_.path() + "/per-job.csv", "--svg", dir_.path() + "/a.svg"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* policy : {"fifo", "dljob"}) {
    for (const char* key : {"avg_jct", "p95_jct", "avg_wait", "p95_wait", "makespan",
                            "gpu_allocation", "preemptions"}) {
      EXPECT_TRUE(j[policy].contains(key)) << policy << " " << key;
    }
  }
  EXPECT_EQ(j["fifo"]["avg_jct"], 261.0);
  EXPECT_EQ(j["dljob"]["avg_jct"], 211.5);
  EXPECT_EQ(j["fifo"]["avg_wait"], 123.5);
  EXPECT_EQ(j["dljob"]["avg_wait"], 74.0);
  EXPECT_EQ(j["fifo"]["p95_jct"], 497.0);
  EXPECT_EQ(j["dljob"]["makespan"], 500);
  EXPECT_EQ(j["dljob"]["gpu_allocation"], 0.625);
  EXPECT_EQ(j["dljob"]["preemptions"], 0);
  const std::string per_job = ReadFile(dir_.path() + "/per-job.csv");
  EXPECT_NE(per_job.find("\ndljob,j3,2,2,52,50,0,2,default,0,0,false\n"), std::string::npos)
      << per_job;
  EXPECT_NE(per_job.find("\nfifo,j3,2,200,250,248,198,2,default,0,0,false\n"), std::string::npos);
  const std::string svg = ReadFile(dir_.path() + "/a.svg");
  EXPECT_NE(svg.find(">dljob</text>"), std::string::npos);
  EXPECT_NE(r.err.find("dljob-sim dljob: done"), std::string::npos) << r.err;
}

// --estimates: the JSON gains each policy's estimate figures (the tiny trace's fifo estimates are
// worked out in simulator_test.cc), the table its estimate columns, and --estimates-out a row per
// estimate.
TEST_F(SimCli, EstimatesAreScoredWhenAskedFor) {
  auto r = RunCommand(Args({"--policy", "fifo,las", "-o", "json", "--estimates", "--estimate-noise",
                            "0.2", "--estimates-out", dir_.path() + "/estimates.csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* policy : {"fifo", "las"}) {
    ASSERT_TRUE(j[policy].contains("estimates")) << policy;
    EXPECT_GT(j[policy]["estimates"]["jobs"], 0) << policy;
  }
  const std::string csv = ReadFile(dir_.path() + "/estimates.csv");
  EXPECT_EQ(csv.rfind("policy,name,submit_time,made_at,estimate,basis,start_time,error\n", 0), 0u);
  EXPECT_NE(csv.find("\nfifo,j3,2,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nlas,"), std::string::npos) << csv;
  EXPECT_NE(r.err.find(" estimates taking "), std::string::npos) << r.err;
  auto table = RunCommand(Args({"--policy", "fifo", "-q", "--estimates"}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("est err p50  est err p90  est in 25%  est unknown\n"),
            std::string::npos)
      << table.out;
  // Without --estimates, no estimate figures.
  auto plain = RunCommand(Args({"--policy", "fifo", "-o", "json", "-q"}));
  EXPECT_FALSE(nlohmann::json::parse(plain.out)["fifo"].contains("estimates"));
}

TEST_F(SimCli, TableByDefault) {
  auto r = RunCommand(Args({"--policy", "fifo,dljob", "-q"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "policy  jobs  done  avg JCT  p95 JCT  avg wait  p95 wait  makespan  GPU alloc  "
            "alloc queued   frag  preempt  wall");
  EXPECT_EQ(r.err, "");
}

TEST_F(SimCli, UsageErrorsExitTwo) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--policy", "lifo"},
                                             {"--bogus"},
                                             {"-o", "xml"},
                                             {"--min-run-time", "-1"},
                                             {"--estimates-out", "x.csv"},
                                             {"--estimates", "--estimate-every", "0"},
                                             {"--estimates", "--estimate-noise", "1.5"}}) {
    auto r = RunCommand(Args(args));
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("dljob-sim: error: ", 0), 0u) << r.err;
  }
  auto r = RunCommand({BinDir() + "/dljob-sim", "--jobs", "x.csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--nodes/--jobs"), std::string::npos) << r.err;
}

TEST_F(SimCli, BadFilesNameFileLineAndColumn) {
  Write(dir_.path() + "/jobs.csv", testing::kTinyJobs + "j5,4,10,3,2,,,,\n");
  auto r = RunCommand(Args({"-q"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "dljob-sim: error: " + dir_.path() +
                       "/jobs.csv:6:11: gpus_per_worker: num_gpu 3 is not a multiple of 2\n");
  auto missing = RunCommand({BinDir() + "/dljob-sim", "--nodes", dir_.path() + "/none.csv",
                             "--jobs", dir_.path() + "/jobs.csv"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "dljob-sim: error: cannot open \"" + dir_.path() +
                             "/none.csv\": No such file or directory\n");
}

TEST_F(SimCli, GeneratesATraceItCanReplay) {
  const std::string out = dir_.path() + "/gen";
  auto g = RunCommand({BinDir() + "/dljob-sim", "--generate-trace", "--jobs-count", "200", "--gpus",
                       "128", "--seed", "5", "--out-dir", out});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(g.out, "wrote 200 jobs on 16 nodes (128 GPUs) to " + out +
                       ": nodes.csv, jobs.csv, queues.csv\n");
  auto r = RunCommand({BinDir() + "/dljob-sim", "--nodes", out + "/nodes.csv", "--jobs",
                       out + "/jobs.csv", "--queues", out + "/queues.csv", "--policy",
                       "fifo,spread,best-fit,dljob,las,sjf", "-o", "json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.size(), 6u);
  for (auto it = j.begin(); it != j.end(); ++it) EXPECT_EQ(it.value()["finished"], 200) << it.key();
}

}  // namespace
}  // namespace dljob::scheduler::sim
