#include "operator/metrics/prometheus.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace dljob::metrics {
namespace {

TEST(PrometheusTest, RendersHelpTypeAndSamplesInOrder) {
  std::vector<Family> families = {
      {"dljob_jobs",
       "DLJobs by phase.",
       MetricType::kGauge,
       {{{{"phase", "Running"}}, 2}, {{{"phase", "Queued"}}, 0}}},
      {"dljob_reconciles_total", "Reconciles.", MetricType::kCounter, {{{}, 17}}},
  };
  EXPECT_EQ(RenderText(families),
            "# HELP dljob_jobs DLJobs by phase.\n"
            "# TYPE dljob_jobs gauge\n"
            "dljob_jobs{phase=\"Running\"} 2\n"
            "dljob_jobs{phase=\"Queued\"} 0\n"
            "# HELP dljob_reconciles_total Reconciles.\n"
            "# TYPE dljob_reconciles_total counter\n"
            "dljob_reconciles_total 17\n");
}

TEST(PrometheusTest, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  std::string text = RenderText(
      {{"m", "line1\nback\\slash", MetricType::kGauge, {{{{"job", "x\"y"}, {"ns", "a"}}, 1}}}});
  EXPECT_NE(text.find("# HELP m line1\\nback\\\\slash\n"), std::string::npos) << text;
  EXPECT_NE(text.find("m{job=\"x\\\"y\",ns=\"a\"} 1\n"), std::string::npos) << text;
}

TEST(PrometheusTest, FormatsValuesShortestAndSpecialsAsPrometheusReadsThem) {
  EXPECT_EQ(FormatValue(2950.5), "2950.5");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusTest, ValidatesMetricNames) {
  EXPECT_TRUE(ValidMetricName("dljob_job_images_per_second"));
  EXPECT_TRUE(ValidMetricName("a:b_1"));
  EXPECT_FALSE(ValidMetricName(""));
  EXPECT_FALSE(ValidMetricName("1abc"));
  EXPECT_FALSE(ValidMetricName("a-b"));
}

}  // namespace
}  // namespace dljob::metrics
