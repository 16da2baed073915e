// `dljob advise` for real: the Fashion-MNIST example on this machine with a reduced grid (1 rank,
// threads 1 and 2, one memory cap, 30 steps a trial), through the dljob program, real mpirun and
// dljob-train; then --apply's result validates with `dljob validate`. Fails, naming
// scripts/dev/setup.sh, when the dataset or dljob-train is missing.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/command.h"

namespace dljob::testing {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AdviseE2E, FashionMnistReducedGrid) {
  ASSERT_TRUE(fs::exists("/usr/share/datasets/fashion-mnist"))
      << "Fashion-MNIST is missing: run scripts/dev/setup.sh (dataset-fashion-mnist)";
  ASSERT_TRUE(fs::exists(BinDir() + "/dljob-train"))
      << "dljob-train is not built next to dljob: build it (scripts/dev/setup.sh installs "
         "LibTorch)";
  TempDir dir;
  const std::string job = dir.path() + "/mnist-job.yaml";
  fs::copy_file(SourceDir() + "/examples/mnist-job.yaml", job);
  const std::string svg = dir.path() + "/plot.svg";
  CommandResult r = RunCommand(
      {BinDir() + "/dljob", "advise", "-f", job, "--ranks", "1", "--threads", "1,2",
       "--memory-fractions", "0.5", "--num-batches", "30", "-o", "json", "--svg", svg, "--apply"},
      {{"XDG_STATE_HOME", dir.path() + "/state"}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["unit"], "images/sec");
  EXPECT_EQ(j["ranks"], 1);
  bool memory_measured = true;
  for (const auto& n : j["notes"]) {
    if (n.get<std::string>().rfind("memory: not measured", 0) == 0) memory_measured = false;
  }
  const size_t trials = j["trials"].size();
  EXPECT_EQ(trials, memory_measured ? 3u : 2u) << j.dump(2);
  for (const auto& t : j["trials"]) {
    if (t["axis"] == "threads") {
      EXPECT_TRUE(t["ok"].get<bool>()) << t.dump();
      EXPECT_GT(t["throughput"].get<double>(), 0);
      EXPECT_GT(t["startupSeconds"].get<double>(), 0);
      if (memory_measured) {
        EXPECT_GT(t["peakMemoryBytes"].get<int64_t>(), 1 << 20);
      }
    }
  }
  const int threads = j["recommendation"]["threadsPerRank"];
  EXPECT_TRUE(threads == 1 || threads == 2);
  EXPECT_EQ(j["recommendation"]["cpuPerGpu"], std::to_string(threads));
  EXPECT_EQ(j["recommendation"]["cache"], false);  // hostPath: on local disk already
  EXPECT_EQ(j["recommendation"].contains("memoryPerGpu"), memory_measured);

  // The plot, and the file --apply wrote: the comments kept, the recommendation in, valid.
  EXPECT_EQ(Read(svg).rfind("<svg", 0), 0u);
  const std::string applied = Read(job);
  EXPECT_NE(applied.find("# A small data-parallel job"), std::string::npos);
  EXPECT_NE(applied.find("cpuPerGpu: \"" + std::to_string(threads) + "\""), std::string::npos)
      << applied;
  CommandResult v = RunCommand({BinDir() + "/dljob", "validate", "-f", job});
  EXPECT_EQ(v.exit_code, 0) << v.err << v.out;
  // The trials left no job records behind.
  CommandResult list = RunCommand({BinDir() + "/dljob", "list", "--local"},
                                  {{"XDG_STATE_HOME", dir.path() + "/state"}});
  EXPECT_EQ(list.out.find("advise-trial"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace dljob::testing
