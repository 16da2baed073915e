#include "images/trainer/reporter.h"

#include <sstream>

#include <gtest/gtest.h>

#include "jobs/metric_line.h"

namespace dljob::trainer {
namespace {

HeaderInfo SampleHeader() {
  HeaderInfo h;
  h.model = "mnist_cnn";
  h.dataset = "fashion-mnist";
  h.global_batch = 64;
  h.per_device_batch = 32;
  h.num_batches = 937;
  h.num_epochs = 0.99946;
  h.device = "cpu (no GPU found)";
  h.ranks = 2;
  h.collective = "mpi";
  h.threads = 1;
  h.optimizer = "momentum (0.9)";
  h.learning_rate = 0.05;
  return h;
}

TEST(ReporterFormatTest, HeaderIsAlignedTfCnnStyle) {
  EXPECT_EQ(FormatHeader(SampleHeader()),
            "Model:         mnist_cnn\n"
            "Dataset:       fashion-mnist\n"
            "Mode:          training\n"
            "Batch size:    64 global\n"
            "               32 per device\n"
            "Num batches:   937\n"
            "Num epochs:    1.00\n"
            "Devices:       cpu (no GPU found)\n"
            "Ranks:         2 (mpi)\n"
            "Threads:       1 per rank\n"
            "Optimizer:     momentum (0.9)\n"
            "Learning rate: 0.05");
}

TEST(ReporterFormatTest, StepRow) {
  EXPECT_EQ(FormatStepRow(100, {1532.43, 12.08, 7.96}, 0.51249),
            "100\timages/sec: 1532.4 +/- 12.1 (jitter = 8.0)\t0.512");
}

TEST(ReporterFormatTest, TotalIsBetweenRules) {
  const std::string rule(64, '-');
  EXPECT_EQ(FormatTotal(1510.2191), rule + "\ntotal images/sec: 1510.22\n" + rule);
}

TEST(ReporterFormatTest, Accuracy) {
  EXPECT_EQ(FormatAccuracy(2, 0.87125, 8712, 10000),
            "Epoch 2: test accuracy = 0.8712 (8712 of 10000)");
}

TEST(ReporterFormatTest, LossTraceKeepsNineDigits) {
  EXPECT_EQ(FormatLossTrace(3, 2.302585093), "loss\t3\t2.30258509");
}

TEST(ReporterFormatTest, MetricFieldsRoundTripThroughTheParser) {
  MetricReport r{100, 1, 2950.5, 0.25, std::nullopt, 1, 2, 937};
  std::optional<MetricSample> sample = ParseMetricLine(FormatMetricLine(MetricFields(r)));
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->step, 100);
  EXPECT_EQ(sample->epoch, 1);
  EXPECT_EQ(sample->images_per_sec, 2950.5);
  EXPECT_EQ(sample->loss, 0.25);
  EXPECT_FALSE(sample->accuracy.has_value());
  EXPECT_FALSE(sample->fields.contains("accuracy"));
  EXPECT_EQ(sample->rank, 1);
  EXPECT_EQ(sample->world_size, 2);
  EXPECT_EQ(sample->total_steps, 937);
}

TEST(ReporterFormatTest, MetricLeavesOutUnknownRate) {
  MetricReport r{3, 1, std::nullopt, 2.0, 0.5, 0, 1, 10};
  nlohmann::json fields = MetricFields(r);
  EXPECT_FALSE(fields.contains("images_per_sec"));
  EXPECT_EQ(fields["accuracy"], 0.5);
}

TEST(ReporterTest, OnlyRankZeroPrintsHumanTextButEveryRankPrintsMetrics) {
  for (int rank : {0, 1}) {
    std::ostringstream out;
    Reporter reporter(out, rank);
    reporter.WarmupStarted();
    reporter.Metric({5, 1, std::nullopt, 1.0, std::nullopt, rank, 2, 10});
    const std::string text = out.str();
    EXPECT_EQ(text.find("Running warm up") != std::string::npos, rank == 0);
    EXPECT_NE(text.find("DLJOB_METRIC {"), std::string::npos);
    EXPECT_EQ(text.back(), '\n');
  }
}

}  // namespace
}  // namespace dljob::trainer
