// A trial's throughput and noise from metric lines (metrics.h).
#include "cli/advise/metrics.h"

#include <gtest/gtest.h>

namespace dljob::advise {
namespace {

TimedSample Line(double t, const std::string& json) {
  std::optional<MetricSample> m = ParseMetricLine("DLJOB_METRIC " + json);
  EXPECT_TRUE(m.has_value()) << json;
  return {t, m.value_or(MetricSample{})};
}

TEST(SummarizeMetrics, SumsEachRanksLastRate) {
  std::vector<TimedSample> s = {
      Line(2.0, R"({"step":10,"images_per_sec":90,"rank":0,"world_size":2})"),
      Line(2.1, R"({"step":10,"images_per_sec":110,"rank":1,"world_size":2})"),
      Line(3.0, R"({"step":20,"images_per_sec":100,"rank":0,"world_size":2})"),
      Line(3.1, R"({"step":20,"images_per_sec":100,"rank":1,"world_size":2})"),
      Line(3.2, R"({"step":20,"images_per_sec":101,"rank":0,"world_size":2})"),
      Line(3.3, R"({"step":20,"images_per_sec":99,"rank":1,"world_size":2})"),
  };
  TrialMeasurement m;
  m.ok = true;
  SummarizeMetrics(s, m);
  EXPECT_TRUE(m.error.empty());
  EXPECT_DOUBLE_EQ(m.throughput, 200);
  EXPECT_EQ(m.unit, "images/sec");
  EXPECT_DOUBLE_EQ(m.startup_seconds, 2.0);
  EXPECT_EQ(m.noise, 0);  // two windows per rank: too few to tell
}

TEST(SummarizeMetrics, WordsPerSecWinsAndScalesToWorld) {
  std::vector<TimedSample> s = {
      Line(1, R"({"step":1,"images_per_sec":5,"words_per_sec":1000,"rank":0,"world_size":4})"),
  };
  TrialMeasurement m;
  SummarizeMetrics(s, m);
  EXPECT_EQ(m.unit, "words/sec");
  EXPECT_DOUBLE_EQ(m.throughput, 4000);  // rank 0 only, 4 ranks in lock step
}

TEST(SummarizeMetrics, NoiseFromWindows) {
  // Windows 90, 100, 110, 100, 100 (median 100, MAD 0) then the run's rate: no noise; then one
  // with spread.
  std::vector<TimedSample> flat, spread;
  for (double w : {100.0, 100.0, 100.0, 100.0}) {
    flat.push_back(Line(1, R"({"step":1,"images_per_sec":)" + std::to_string(w) + "}"));
  }
  for (double w : {90.0, 100.0, 110.0, 100.0}) {
    spread.push_back(Line(1, R"({"step":1,"images_per_sec":)" + std::to_string(w) + "}"));
  }
  spread.push_back(Line(2, R"({"step":2,"images_per_sec":100})"));
  TrialMeasurement a, b;
  SummarizeMetrics(flat, a);
  SummarizeMetrics(spread, b);
  EXPECT_EQ(a.noise, 0);
  // MAD of {90,100,110,100} around 100 is 5: 1.4826 * 5 / 100 / sqrt(4).
  EXPECT_NEAR(b.noise, 1.4826 * 5 / 100 / 2, 1e-9);
}

TEST(SummarizeMetrics, NoRateIsAFailure) {
  TrialMeasurement m;
  SummarizeMetrics({Line(1, R"({"step":1,"loss":2.3})")}, m);
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("images_per_sec"), std::string::npos);
}

}  // namespace
}  // namespace dljob::advise
