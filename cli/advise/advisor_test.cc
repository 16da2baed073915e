// The advisor and the recommendation (advisor.h, recommendation.h) over a fake runner whose
// throughput is a known function of the setting: which trials run, in which order, what is chosen
// on each axis, and what is recommended. Also --apply's output of that recommendation validates.
#include "cli/advise/advisor.h"

#include <cmath>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "cli/advise/recommendation.h"
#include "cli/advise/report.h"
#include "cli/advise/svg.h"
#include "jobs/defaults.h"
#include "jobs/validation.h"

namespace dljob::advise {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

class NullObserver : public JobObserver {
 public:
  void OnOutput(int, bool, std::string_view) override {}
  void OnUpdate(const DLJob&) override {}
  void OnNotice(std::string_view) override {}
};

// Reads the setting back from the trial's job (as a real runner would see it) and answers with
// `model`'s throughput; peak memory 1000 MiB; a cap below `oom_below` runs out of memory.
class FakeRunner : public TrialRunner {
 public:
  using Model = std::function<double(int threads, int loader, const std::string& data)>;
  FakeRunner(Model model, int64_t oom_below = 0, bool can_limit = true)
      : model_(std::move(model)), oom_below_(oom_below), can_limit_(can_limit) {}

  TrialMeasurement Run(const DLJob& job, std::optional<int64_t> cap, JobObserver&) override {
    int threads = 0, loader = 0;
    for (const EnvVar& e : job.spec.env) {
      if (e.name == "OMP_NUM_THREADS") threads = std::stoi(e.value);
    }
    if (auto l = FlagValue(job.spec.command, "--loader_threads")) loader = std::stoi(*l);
    std::string data = "local";
    if (!job.spec.data.empty()) {
      if (job.spec.data[0].source.rfind("oss://", 0) == 0) data = "cache";
    } else if (FlagValue(job.spec.command, "--data_dir").value_or("").rfind("oss://", 0) == 0) {
      data = "store";
    }
    calls.push_back({threads, loader, data, cap});
    TrialMeasurement m;
    m.unit = "images/sec";
    m.peak_memory_bytes = 1000 * kMiB;
    m.startup_seconds = data == "store" ? 9 : 3;
    if (cap && *cap < oom_below_) {
      m.out_of_memory = true;
      m.error = "killed by the memory cap";
      return m;
    }
    m.ok = true;
    m.throughput = model_(threads, loader, data);
    return m;
  }
  bool CanLimitMemory(std::string* why) const override {
    if (!can_limit_ && why) *why = "no cgroup";
    return can_limit_;
  }

  struct Call {
    int threads, loader;
    std::string data;
    std::optional<int64_t> cap;
  };
  std::vector<Call> calls;

 private:
  Model model_;
  int64_t oom_below_;
  bool can_limit_;
};

DLJob MnistJob(const std::string& source = "hostPath:/usr/share/datasets/fashion-mnist") {
  DLJob j;
  j.metadata.name = "mnist";
  j.spec.image = "dljob/trainer:cpu";
  j.spec.command = {"dljob-train", "--model=mnist_cnn", "--data_name=fashion-mnist",
                    "--data_dir=/data/fashion-mnist"};
  j.spec.gpus = 2;
  j.spec.data.push_back({"fashion-mnist", source, "/data/fashion-mnist", {}, {}, {}});
  ApplyDefaults(j);
  return j;
}

struct Outcome {
  AdviceRun run;
  Recommendation rec;
  std::vector<FakeRunner::Call> calls;
};

Outcome Advise(const DLJob& job, FakeRunner runner, AdviseOptions o, int cpus = 8) {
  std::string why;
  const bool can = runner.CanLimitMemory(&why);
  Result<AdvisePlan> plan = PlanAdvice(job, o, cpus, can, why);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  NullObserver observer;
  AdviceRun run = RunAdvice(job, *plan, o, runner, observer);
  return {run, Recommend(run, *plan), runner.calls};
}

TEST(Advisor, ThreadsSaturateThenMemoryCapsFromThePeak) {
  // Linear to 4 threads, flat after.
  FakeRunner runner([](int t, int, const std::string&) { return 100.0 * std::min(t, 4); },
                    /*oom_below=*/450 * kMiB);
  AdviseOptions o;
  o.ranks = 1;
  o.memory_fractions = {0.75, 0.5, 0.3};
  Outcome out = Advise(MnistJob(), std::move(runner), o);
  // threads 1..8 (8 cpus, 1 rank: up to min(8, 16)), then caps at 0.75, 0.5, 0.3 of 1000 MiB.
  ASSERT_EQ(out.calls.size(), 7u);
  EXPECT_EQ(out.calls[0].threads, 1);
  EXPECT_EQ(out.calls[3].threads, 8);
  for (size_t i = 4; i < 7; ++i) EXPECT_EQ(out.calls[i].threads, 4) << "memory trials at the knee";
  EXPECT_EQ(out.calls[4].cap, 750 * kMiB);
  EXPECT_EQ(out.calls[5].cap, 500 * kMiB);
  EXPECT_EQ(out.calls[6].cap, 300 * kMiB);  // runs out of memory
  EXPECT_EQ(out.run.chosen.threads_per_rank, 4);
  EXPECT_EQ(out.run.memory_cap_bytes, 500 * kMiB);
  EXPECT_EQ(out.rec.cpu_per_gpu, "4");
  EXPECT_EQ(out.rec.memory_per_gpu, "640Mi");  // 500 MiB × 1.25 = 625 MiB, up to 64 MiB steps
  EXPECT_EQ(out.rec.cache, false);             // hostPath: on local disk already
  EXPECT_FALSE(out.rec.loader_threads.has_value());
  EXPECT_TRUE(out.run.trials[6].measurement.out_of_memory);
}

TEST(Advisor, MemoryAxisStopsAtTheFirstFailure) {
  FakeRunner runner([](int, int, const std::string&) { return 100.0; }, /*oom_below=*/450 * kMiB);
  AdviseOptions o;
  o.threads = {1};
  o.memory_fractions = {0.75, 0.3, 0.2};
  Outcome out = Advise(MnistJob(), std::move(runner), o);
  ASSERT_EQ(out.calls.size(), 3u);  // 0.2 is not tried after 0.3 ran out of memory
  EXPECT_EQ(out.calls[2].cap, 300 * kMiB);
  EXPECT_EQ(out.run.memory_cap_bytes, 750 * kMiB);
  EXPECT_NE(out.run.axes.back().explanation.find("300.0 MiB and below failed"), std::string::npos)
      << out.run.axes.back().explanation;
}

TEST(Advisor, OutOfMemoryIsNotRepeated) {
  FakeRunner runner([](int, int, const std::string&) { return 100.0; }, /*oom_below=*/450 * kMiB);
  AdviseOptions o;
  o.threads = {1};
  o.repeats = 2;
  o.memory_fractions = {0.75, 0.3};
  Outcome out = Advise(MnistJob(), std::move(runner), o);
  // threads 1 twice (the memory reference too), 750 MiB twice, 300 MiB once: it ran out.
  ASSERT_EQ(out.calls.size(), 5u);
  EXPECT_EQ(out.calls[4].cap, 300 * kMiB);
}

TEST(Advisor, MemoryPerGpuDividesByRanks) {
  FakeRunner runner([](int, int, const std::string&) { return 100.0; });
  AdviseOptions o;
  o.threads = {1};
  o.memory_fractions = {0.5};
  Outcome out = Advise(MnistJob(), std::move(runner), o);  // 2 ranks
  EXPECT_EQ(out.run.memory_cap_bytes, 500 * kMiB);
  EXPECT_EQ(out.rec.memory_per_gpu, "320Mi");  // 500 × 1.25 / 2 = 312.5 → 320
  EXPECT_EQ(out.rec.cpu_per_gpu, "1");
}

TEST(Advisor, NoCgroupNoMemoryAxis) {
  FakeRunner runner([](int t, int, const std::string&) { return 100.0 * t; }, 0, false);
  AdviseOptions o;
  o.threads = {1, 2};
  Outcome out = Advise(MnistJob(), std::move(runner), o);
  EXPECT_EQ(out.calls.size(), 2u);
  EXPECT_FALSE(out.rec.memory_per_gpu.has_value());
  EXPECT_EQ(out.rec.lines[1].value, "-");
  EXPECT_EQ(out.rec.lines[1].why, "not measured: no cgroup");
}

TEST(Advisor, LoaderThreadsAddToCpu) {
  FakeRunner runner([](int t, int l, const std::string&) {
    return 100.0 * std::min(t, 2) + 50.0 * std::min(l, 4);
  });
  AdviseOptions o;
  o.memory_fractions = {};
  DLJob job = MnistJob("nas://nfs/imagenet");
  job.spec.command[2] = "--data_name=imagenet";
  Outcome out = Advise(job, std::move(runner), o, 8);
  // Threads are tried with the job's own loader threads (the flag unset: 0 here).
  EXPECT_EQ(out.run.chosen.threads_per_rank, 2);
  EXPECT_EQ(out.run.chosen.loader_threads, 4);
  EXPECT_EQ(out.rec.cpu_per_gpu, "6");
  EXPECT_EQ(out.rec.loader_threads, 4);
}

TEST(Advisor, CacheWhenStoreIsSlower) {
  FakeRunner slower([](int, int, const std::string& d) { return d == "store" ? 60.0 : 100.0; });
  AdviseOptions o;
  o.threads = {1};
  o.memory_fractions = {};
  Outcome out = Advise(MnistJob("oss://bucket/fmnist/shards"), std::move(slower), o);
  // threads 1 (cache, the default), then the data axis runs cache and store afresh, side by side.
  ASSERT_EQ(out.calls.size(), 3u);
  EXPECT_EQ(out.calls[0].data, "cache");
  EXPECT_EQ(out.calls[1].data, "cache");
  EXPECT_EQ(out.calls[2].data, "store");
  EXPECT_EQ(out.run.axes[1].trials, (std::vector<int>{2, 3}));
  EXPECT_EQ(out.run.chosen.data_path, "cache");
  EXPECT_EQ(out.rec.cache, true);
}

TEST(Advisor, SameThroughputTieGoesToFasterStart) {
  // The fake starts store trials at 9 s and cache trials at 3 s: cache wins the tie.
  FakeRunner same([](int, int, const std::string&) { return 100.0; });
  AdviseOptions o;
  o.threads = {1};
  o.memory_fractions = {};
  Outcome out = Advise(MnistJob("oss://bucket/fmnist/shards"), std::move(same), o);
  EXPECT_EQ(out.rec.cache, true);
  const AxisResult* data = nullptr;
  for (const AxisResult& a : out.run.axes) {
    if (a.axis == kAxisData) data = &a;
  }
  ASSERT_NE(data, nullptr);
  EXPECT_NE(data->explanation.find("first step after 3.0 s"), std::string::npos);
}

TEST(Advisor, AllFailedRecommendsNothingMeasured) {
  FakeRunner broken([](int, int, const std::string&) { return NAN; });
  AdviseOptions o;
  o.threads = {1, 2};
  o.memory_fractions = {};
  Outcome out = Advise(MnistJob(), std::move(broken), o);
  EXPECT_FALSE(out.run.axes[0].saturation.has_value());
  EXPECT_EQ(out.run.axes[0].explanation, "no trial succeeded");
}

TEST(Advisor, ReportTableJsonAndSvg) {
  FakeRunner runner([](int t, int, const std::string&) { return 100.0 * std::min(t, 2); },
                    400 * kMiB);
  AdviseOptions o;
  o.threads = {1, 2, 4};
  o.memory_fractions = {0.5, 0.3};
  Outcome out = Advise(MnistJob(), std::move(runner), o);
  AdviceContext c{"mnist", "job.yaml", 2, 8, "CPU", {}};
  const std::string table = FormatTrialTable(out.run);
  EXPECT_NE(table.find("IMAGES/SEC"), std::string::npos);
  EXPECT_NE(table.find("out of memory"), std::string::npos);
  nlohmann::ordered_json j = AdviceJson(c, out.run, out.rec, CarryOverNotes(false, "job.yaml"));
  EXPECT_EQ(j["trials"].size(), 5u);
  EXPECT_EQ(j["recommendation"]["cpuPerGpu"], "2");
  EXPECT_EQ(j["recommendation"]["cache"], false);
  EXPECT_EQ(j["axes"][0]["shape"], "saturates");
  const std::string text = FormatRecommendation(c, out.run, out.rec, CarryOverNotes(false, "j"));
  EXPECT_NE(text.find("resources.cpuPerGpu"), std::string::npos);
  EXPECT_NE(text.find("CPU ranks only"), std::string::npos);
  const std::string svg = AdviceSvg("mnist", out.run);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("threads: saturates"), std::string::npos);
  EXPECT_NE(svg.find("memory: "), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(Advisor, RepeatsRunInRoundsAndTheMedianCounts) {
  // Each call of a setting gives the next of its values: the median is the middle one.
  std::map<int, int> seen;
  FakeRunner runner([&seen](int t, int, const std::string&) {
    const int n = seen[t]++;
    return t == 1 ? std::vector<double>{100, 300, 110}[n] : std::vector<double>{150, 160, 140}[n];
  });
  AdviseOptions o;
  o.threads = {1, 2};
  o.repeats = 3;
  o.memory_fractions = {};
  Outcome out = Advise(MnistJob(), std::move(runner), o);
  ASSERT_EQ(out.calls.size(), 6u);
  std::vector<int> order;
  for (const auto& c : out.calls) order.push_back(c.threads);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 1, 2, 1, 2}));
  // Medians 110 and 150: 2 threads look better, but the spread of the 1-thread repeats widens
  // the band to 2 × (300 − 100) / 110 / 2 / √3 ≈ 105%: the trials cannot tell them apart, so the
  // curve is flat and the least is chosen.
  ASSERT_TRUE(out.run.axes[0].saturation.has_value());
  EXPECT_EQ(out.run.axes[0].saturation->best_value, 150);
  EXPECT_EQ(out.run.axes[0].saturation->chosen, 1);
  EXPECT_EQ(out.run.axes[0].saturation->shape, CurveShape::kFlat);
}

TEST(Advisor, StillRisingAtAllTheCoresSaysSo) {
  FakeRunner runner([](int t, int, const std::string&) { return 100.0 * t; });
  AdviseOptions o;
  o.ranks = 1;
  o.memory_fractions = {};
  Outcome out = Advise(MnistJob(), std::move(runner), o, /*cpus=*/2);
  EXPECT_EQ(out.rec.cpu_per_gpu, "2");
  EXPECT_NE(out.run.axes[0].explanation.find("use all 2 cores of this machine"), std::string::npos)
      << out.run.axes[0].explanation;
}

TEST(Advisor, NoisyTrialsAreSaidToBe) {
  FakeRunner runner([](int t, int, const std::string&) { return 100.0 * t; });
  AdviseOptions o;
  o.threads = {1, 2};
  o.memory_fractions = {};
  Outcome quiet = Advise(MnistJob(), std::move(runner), o);
  EXPECT_TRUE(NoiseNotes(quiet.run, 0.05).empty());
  AdviceRun noisy = quiet.run;
  noisy.axes[0].saturation->band = 0.3;
  ASSERT_EQ(NoiseNotes(noisy, 0.05).size(), 1u);
  EXPECT_NE(NoiseNotes(noisy, 0.05)[0].find("threads trials were noisy"), std::string::npos);
}

TEST(MemoryQuantity, RoundsUpTo64Mi) {
  EXPECT_EQ(MemoryQuantity(1), "64Mi");
  EXPECT_EQ(MemoryQuantity(64 * kMiB), "64Mi");
  EXPECT_EQ(MemoryQuantity(64 * kMiB + 1), "128Mi");
  EXPECT_EQ(MemoryQuantity(1000 * kMiB), "1Gi");
  EXPECT_EQ(MemoryQuantity(1025 * kMiB), "1088Mi");
}

}  // namespace
}  // namespace dljob::advise
