#include "cli/bench_report.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(BenchPlanTest, OneRunPerStrategyAndRankCountWithTheTrainerFlags) {
  BenchOptions o;
  o.model = "mnist_cnn";
  o.gpus = "4,1,2,2";
  o.strategies = "fused,per-tensor";
  o.batch_size = 64;
  o.num_batches = 12;
  Result<std::vector<BenchRun>> runs = PlanBench(o);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 6u);  // ranks sorted and de-duplicated, per strategy
  EXPECT_EQ((*runs)[0].ranks, 1);
  EXPECT_EQ((*runs)[2].ranks, 4);
  EXPECT_EQ((*runs)[3].strategy, "per-tensor");
  const DLJob& job = (*runs)[1].job;
  EXPECT_EQ(job.metadata.name, "bench-mnist-cnn-f2");  // a DNS label: no '_'
  EXPECT_EQ(job.spec.gpus, 2);
  const std::vector<std::string>& cmd = job.spec.command;
  for (const char* want : {"--model=mnist_cnn", "--data_name=synthetic", "--batch_size=64",
                           "--num_batches=12", "--fusion_threshold_mb=64"}) {
    EXPECT_NE(std::find(cmd.begin(), cmd.end(), want), cmd.end()) << want;
  }
  const std::vector<std::string>& t = (*runs)[3].job.spec.command;
  EXPECT_NE(std::find(t.begin(), t.end(), "--fusion_threshold_mb=0"), t.end());
}

TEST(BenchPlanTest, EveryStrategyAddsItsTrainerFlagsAndHasItsOwnJobName) {
  BenchOptions o;
  o.gpus = "2";
  o.strategies = "no-overlap,fp16,hierarchical,parameter-server,2bit";
  Result<std::vector<BenchRun>> runs = PlanBench(o);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 5u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"--overlap_backward=false", "bench-resnet18-n2"},
      {"--fp16_allreduce", "bench-resnet18-x2"},
      {"--allreduce_alg=hierarchical", "bench-resnet18-h2"},
      {"--variable_update=parameter_server", "bench-resnet18-p2"},
      {"--gradient_compression=2bit", "bench-resnet18-c2"}};
  for (size_t i = 0; i < want.size(); ++i) {
    const std::vector<std::string>& cmd = (*runs)[i].job.spec.command;
    EXPECT_NE(std::find(cmd.begin(), cmd.end(), want[i].first), cmd.end()) << want[i].first;
    EXPECT_EQ((*runs)[i].job.metadata.name, want[i].second);
  }
}

TEST(BenchPlanTest, ThreadsPerRankSetsEveryRunsOmpThreads) {
  BenchOptions o;
  o.gpus = "1,2";
  Result<std::vector<BenchRun>> plain = PlanBench(o);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE((*plain)[0].job.spec.env.empty()) << "the runner's default";
  o.threads_per_rank = 1;
  Result<std::vector<BenchRun>> pinned = PlanBench(o);
  ASSERT_TRUE(pinned.ok());
  for (const BenchRun& run : *pinned) {
    ASSERT_EQ(run.job.spec.env.size(), 1u);
    EXPECT_EQ(run.job.spec.env[0].name, "OMP_NUM_THREADS");
    EXPECT_EQ(run.job.spec.env[0].value, "1");
  }
  o.threads_per_rank = -1;
  EXPECT_NE(PlanBench(o).status().message().find("--threads-per-rank"), std::string::npos);
}

TEST(BenchReportTest, TheStrategyColumnFitsTheLongestName) {
  std::vector<BenchRow> rows = ScalingRows(
      {{"synthetic", "parameter-server", 1, 10.0, ""}, {"synthetic", "fused", 1, 12.0, ""}});
  std::string table = FormatBenchTable("resnet18", rows);
  std::vector<std::string> lines;
  for (size_t b = 0, e; (e = table.find('\n', b)) != std::string::npos; b = e + 1) {
    lines.push_back(table.substr(b, e - b));
  }
  ASSERT_EQ(lines.size(), 3u) << table;
  EXPECT_EQ(lines[0].size(), lines[1].size()) << table;
  EXPECT_EQ(lines[1].size(), lines[2].size()) << table;
}

TEST(BenchPlanTest, RealDataRunsBesideSyntheticWithTheirOwnNamesAndBaselines) {
  BenchOptions o;
  o.model = "mnist_cnn";
  o.gpus = "1,2";
  o.data = "synthetic,fashion-mnist";
  o.data_dir = "/data/fmnist-shards";
  Result<std::vector<BenchRun>> runs = PlanBench(o);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 4u);
  const BenchRun& synthetic = (*runs)[1];
  const BenchRun& real = (*runs)[3];
  EXPECT_EQ(synthetic.job.metadata.name, "bench-mnist-cnn-f2");
  EXPECT_EQ(real.job.metadata.name, "bench-mnist-cnn-f2-fmnist");
  const std::vector<std::string>& s = synthetic.job.spec.command;
  const std::vector<std::string>& r = real.job.spec.command;
  EXPECT_NE(std::find(s.begin(), s.end(), "--data_name=synthetic"), s.end());
  EXPECT_EQ(std::find(s.begin(), s.end(), "--data_dir=/data/fmnist-shards"), s.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "--data_name=fashion-mnist"), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "--data_dir=/data/fmnist-shards"), r.end());

  std::vector<BenchRow> rows = ScalingRows({{"synthetic", "fused", 1, 100.0, ""},
                                            {"synthetic", "fused", 2, 200.0, ""},
                                            {"fashion-mnist", "fused", 1, 80.0, ""},
                                            {"fashion-mnist", "fused", 2, 120.0, ""}});
  EXPECT_DOUBLE_EQ(*rows[1].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*rows[3].efficiency, 0.75) << "against the 1-rank fashion-mnist run";
  const std::string table = FormatBenchTable("mnist_cnn", rows);
  EXPECT_NE(table.find("fashion-mnist fused"), std::string::npos) << table;
  EXPECT_NE(BenchSvg("mnist_cnn", rows).find("fused, fashion-mnist"), std::string::npos);

  o.data = "cifar";
  EXPECT_NE(PlanBench(o).status().message().find("--data: unknown data set \"cifar\""),
            std::string::npos);
}

TEST(BenchPlanTest, BadFlagsNameTheFlag) {
  for (auto [gpus, strategies, needle] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"1,x", "fused", "--gpus"},
           {"", "fused", "--gpus"},
           {"0", "fused", "--gpus"},
           {"1", "ring", "--strategies: unknown strategy \"ring\""}}) {
    BenchOptions o;
    o.gpus = gpus;
    o.strategies = strategies;
    Result<std::vector<BenchRun>> runs = PlanBench(o);
    ASSERT_FALSE(runs.ok()) << gpus << " " << strategies;
    EXPECT_NE(runs.status().message().find(needle), std::string::npos) << runs.status().message();
  }
}

TEST(BenchReportTest, EfficiencyIsAgainstTheSmallestRunOfTheSameStrategy) {
  std::vector<BenchRow> rows = ScalingRows({
      {"synthetic", "fused", 1, 100.0, ""},
      {"synthetic", "fused", 2, 180.0, ""},
      {"synthetic", "fused", 4, std::nullopt, "mpirun failed"},
      {"synthetic", "per-tensor", 2, 150.0, ""},  // no 1-rank run: 2 ranks is the base
      {"synthetic", "per-tensor", 4, 240.0, ""},
  });
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_DOUBLE_EQ(*rows[0].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*rows[1].per_rank, 90.0);
  EXPECT_DOUBLE_EQ(*rows[1].efficiency, 0.9);
  EXPECT_FALSE(rows[2].efficiency.has_value());
  EXPECT_DOUBLE_EQ(*rows[3].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*rows[4].efficiency, 0.8);

  std::string table = FormatBenchTable("resnet18", rows);
  EXPECT_NE(
      table.find("resnet18     synthetic fused            2        180.0           90.0    90.0%"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("(mpirun failed)"), std::string::npos) << table;

  nlohmann::json j = BenchJson("resnet18", 32, rows);
  EXPECT_EQ(j["runs"].size(), 5u);
  EXPECT_EQ(j["runs"][1]["scalingEfficiency"], 0.9);
  EXPECT_EQ(j["runs"][1]["data"], "synthetic");
  EXPECT_TRUE(j["runs"][2]["imagesPerSec"].is_null());
  EXPECT_EQ(j["runs"][2]["error"], "mpirun failed");
}

TEST(BenchReportTest, SvgPlotsEachStrategyWithItsIdealLine) {
  std::vector<BenchRow> rows = ScalingRows({{"synthetic", "fused", 1, 100.0, ""},
                                            {"synthetic", "fused", 2, 180.0, ""},
                                            {"synthetic", "per-tensor", 1, 90.0, ""}});
  std::string svg = BenchSvg("mnist_cnn", rows);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  size_t polylines = 0;
  for (size_t at = 0; (at = svg.find("<polyline", at)) != std::string::npos; ++at) ++polylines;
  EXPECT_EQ(polylines, 2u);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);  // the ideal line
  EXPECT_NE(svg.find(">per-tensor<"), std::string::npos);
}

}  // namespace
}  // namespace dljob
