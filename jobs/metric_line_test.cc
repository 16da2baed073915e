#include "jobs/metric_line.h"

#include <random>

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(MetricLine, ParsesKnownAndKeepsUnknownFields) {
  std::optional<MetricSample> s = ParseMetricLine(
      "  DLJOB_METRIC {\"step\":100,\"epoch\":1,\"images_per_sec\":2950.5,\"loss\":2.31,"
      "\"rank\":3,\"world_size\":16,\"total_steps\":1000,\"lr\":0.1}\r\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->step, 100);
  EXPECT_EQ(s->epoch, 1);
  EXPECT_EQ(s->images_per_sec, 2950.5);
  EXPECT_EQ(s->loss, 2.31);
  EXPECT_EQ(s->rank, 3);
  EXPECT_EQ(s->world_size, 16);
  EXPECT_EQ(s->total_steps, 1000);
  EXPECT_EQ(s->fields["lr"], 0.1);
}

TEST(MetricLine, StepAsIntegralFloatIsAccepted) {
  std::optional<MetricSample> s = ParseMetricLine("DLJOB_METRIC {\"step\":12.0}");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->step, 12);
}

TEST(MetricLine, GarbageIsIgnored) {
  const char* bad[] = {
      "",
      "DLJOB_METRIC",
      "DLJOB_METRIC ",
      "DLJOB_METRIC {",
      "DLJOB_METRIC {\"step\":1",
      "DLJOB_METRIC [1,2]",
      "DLJOB_METRIC {}",
      "DLJOB_METRIC {\"step\":\"1\"}",
      "DLJOB_METRIC {\"step\":-1}",
      "DLJOB_METRIC {\"step\":1.5}",
      "DLJOB_METRIC {\"step\":NaN}",
      "DLJOB_METRIC {\"step\":1e400}",
      "DLJOB_METRIC {\"step\":99999999999999999999999}",
      "DLJOB_METRIC {\"step\":1,\"images_per_sec\":\"fast\"}",
      "DLJOB_METRIC {\"step\":1,\"images_per_sec\":-5}",
      "DLJOB_METRIC {\"step\":1,\"rank\":-1}",
      "DLJOB_METRIC {\"step\":1,\"world_size\":0}",
      "dljob_metric {\"step\":1}",
      "Step 100 img/sec 2950",
  };
  for (const char* line : bad) EXPECT_FALSE(ParseMetricLine(line).has_value()) << line;
}

TEST(MetricLine, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  int parsed = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string line = "DLJOB_METRIC ";
    int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) line += static_cast<char>(rng());
    parsed += ParseMetricLine(line).has_value();
  }
  EXPECT_EQ(parsed, 0);
}

TEST(MetricLine, FormatParsesBack) {
  nlohmann::json fields = {{"step", 7}, {"loss", 0.5}};
  std::optional<MetricSample> s = ParseMetricLine(FormatMetricLine(fields));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->step, 7);
  EXPECT_EQ(s->loss, 0.5);
}

MetricSample Sample(int64_t step, std::optional<int64_t> rank, std::optional<double> rate,
                    std::optional<int64_t> world_size = std::nullopt) {
  MetricSample s;
  s.step = step;
  s.rank = rank;
  s.images_per_sec = rate;
  s.world_size = world_size;
  return s;
}

TEST(ProgressAggregator, SumsLatestRatePerRank) {
  ProgressAggregator agg;
  EXPECT_TRUE(agg.empty());
  agg.Add(Sample(10, 0, 100.0, 2), "t1");
  agg.Add(Sample(10, 1, 110.0, 2), "t1");
  agg.Add(Sample(20, 0, 120.0, 2), "t2");
  Throughput t = agg.Current();
  EXPECT_DOUBLE_EQ(*t.images_per_sec, 230.0);
  EXPECT_DOUBLE_EQ(*t.per_gpu_images_per_sec, 115.0);
  EXPECT_EQ(t.step, 20);
  EXPECT_EQ(t.updated_at, "t2");
}

// An elastic job: 4 ranks, then resized to 2 (the trainer's lines carry resizes once it is).
TEST(ProgressAggregator, AResizedJobCountsOnlyItsCurrentRanks) {
  std::optional<MetricSample> line = ParseMetricLine(
      "DLJOB_METRIC {\"step\":120,\"images_per_sec\":90.5,\"rank\":1,\"world_size\":2,"
      "\"resizes\":1}");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->resizes, 1);
  EXPECT_FALSE(ParseMetricLine("DLJOB_METRIC {\"step\":1,\"resizes\":-1}").has_value());
  EXPECT_FALSE(ParseMetricLine("DLJOB_METRIC {\"step\":1,\"resizes\":\"1\"}").has_value());
  ProgressAggregator agg;
  for (int64_t rank = 0; rank < 4; ++rank) agg.Add(Sample(100, rank, 100.0, 4), "t1");
  EXPECT_DOUBLE_EQ(*agg.Current().images_per_sec, 400.0);
  agg.Add(Sample(120, 0, 90.0, 2), "t2");
  agg.Add(*line, "t2");
  Throughput t = agg.Current();
  EXPECT_DOUBLE_EQ(*t.images_per_sec, 180.5);
  EXPECT_DOUBLE_EQ(*t.per_gpu_images_per_sec, 90.25);
  agg.Add(Sample(130, 3, 95.0, 4), "t3");  // resized up again: 3 of 4 ranks reported so far
  EXPECT_DOUBLE_EQ(*agg.Current().images_per_sec, (90.0 + 90.5 + 95.0) * 4 / 3);
}

TEST(ProgressAggregator, ScalesWhenOnlyRankZeroReports) {
  ProgressAggregator agg;
  agg.Add(Sample(5, std::nullopt, 100.0, 8), "t");
  Throughput t = agg.Current();
  EXPECT_DOUBLE_EQ(*t.images_per_sec, 800.0);
  EXPECT_DOUBLE_EQ(*t.per_gpu_images_per_sec, 100.0);
}

TEST(ProgressAggregator, EvalLineKeepsRateAndSetsAccuracy) {
  ProgressAggregator agg;
  MetricSample train = Sample(100, 0, 250.0);
  train.loss = 0.7;
  agg.Add(train, "t1");
  MetricSample eval = Sample(100, 0, std::nullopt);
  eval.accuracy = 0.91;
  agg.Add(eval, "t2");
  Throughput t = agg.Current();
  EXPECT_DOUBLE_EQ(*t.images_per_sec, 250.0);
  EXPECT_EQ(t.accuracy, 0.91);
  EXPECT_EQ(t.loss, 0.7);
}

// A language model reports words/sec and validation perplexity; both travel apart from images.
TEST(ProgressAggregator, WordsPerSecAndPerplexityFromALanguageModel) {
  std::optional<MetricSample> r0 = ParseMetricLine(
      "DLJOB_METRIC {\"step\":50,\"words_per_sec\":4000.5,\"loss\":5.1,\"rank\":0,"
      "\"world_size\":2}");
  std::optional<MetricSample> r1 = ParseMetricLine(
      "DLJOB_METRIC {\"step\":50,\"words_per_sec\":3999.5,\"rank\":1,\"world_size\":2}");
  std::optional<MetricSample> eval =
      ParseMetricLine("DLJOB_METRIC {\"step\":60,\"perplexity\":143.25,\"rank\":0}");
  ASSERT_TRUE(r0 && r1 && eval);
  EXPECT_EQ(r0->words_per_sec, 4000.5);
  EXPECT_EQ(eval->perplexity, 143.25);
  ProgressAggregator agg;
  agg.Add(*r0, "t1");
  agg.Add(*r1, "t1");
  agg.Add(*eval, "t2");
  Throughput t = agg.Current();
  EXPECT_DOUBLE_EQ(*t.words_per_sec, 8000.0);  // the eval line keeps rank 0's rate
  EXPECT_DOUBLE_EQ(*t.per_gpu_words_per_sec, 4000.0);
  EXPECT_EQ(t.perplexity, 143.25);
  EXPECT_FALSE(t.images_per_sec.has_value());
  EXPECT_FALSE(t.accuracy.has_value());
  // A perplexity below 1 or a negative rate is not a metric line.
  EXPECT_FALSE(ParseMetricLine("DLJOB_METRIC {\"step\":1,\"perplexity\":0.5}"));
  EXPECT_FALSE(ParseMetricLine("DLJOB_METRIC {\"step\":1,\"words_per_sec\":-1}"));
}

TEST(ProgressAggregator, LossFromLowestRankAndMaxEpoch) {
  ProgressAggregator agg;
  MetricSample a = Sample(3, 1, 10.0);
  a.loss = 1.5;
  a.epoch = 2;
  MetricSample b = Sample(2, 0, 10.0);
  b.loss = 1.0;
  b.epoch = 1;
  agg.Add(a, "t");
  agg.Add(b, "t");
  Throughput t = agg.Current();
  EXPECT_EQ(t.loss, 1.0);
  EXPECT_EQ(t.epoch, 2);
  EXPECT_EQ(t.step, 3);
}

}  // namespace
}  // namespace dljob
