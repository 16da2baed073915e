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
  EXPECT_EQ(RenderText(families).value(),
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
  std::string text = RenderText({{"m",
                                  "line1\nback\\slash",
                                  MetricType::kGauge,
                                  {{{{"dljob", "x\"y"}, {"ns", "a"}}, 1}}}})
                         .value();
  EXPECT_NE(text.find("# HELP m line1\\nback\\\\slash\n"), std::string::npos) << text;
  EXPECT_NE(text.find("m{dljob=\"x\\\"y\",ns=\"a\"} 1\n"), std::string::npos) << text;
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

TEST(PrometheusTest, ValidatesLabelNames) {
  EXPECT_TRUE(ValidLabelName("namespace"));
  EXPECT_TRUE(ValidLabelName("_a1"));
  EXPECT_FALSE(ValidLabelName(""));
  EXPECT_FALSE(ValidLabelName("1a"));
  EXPECT_FALSE(ValidLabelName("a:b"));  // colons are for metric names only
  EXPECT_FALSE(ValidLabelName("a-b"));
}

// A family with one sample carrying `labels`.
Family WithLabels(Labels labels, std::string name = "dljob_job_gpus",
                  MetricType type = MetricType::kGauge) {
  return Family{std::move(name), "h", type, {{std::move(labels), 1}}};
}

TEST(PrometheusTest, RefusesTheLabelNamesPrometheusReserves) {
  for (const char* reserved : {"job", "instance", "__name__", "__meta_x", "__"}) {
    Family f = WithLabels({{"namespace", "a"}, {reserved, "resnet"}});
    Status s = CheckFamily(f);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << reserved;
    EXPECT_NE(s.message().find("metric dljob_job_gpus: label \"" + std::string(reserved) + "\""),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("reserve"), std::string::npos) << s.message();
    Result<std::string> text = RenderText({WithLabels({{"dljob", "ok"}}), f});
    ASSERT_FALSE(text.ok()) << reserved;
    EXPECT_EQ(text.status().message(), s.message()) << "nothing rendered, the reason given";
  }
  EXPECT_NE(ReservedLabelReason("job").find("exported_job"), std::string::npos);
  EXPECT_NE(ReservedLabelReason("job").find("\"dljob\""), std::string::npos)
      << "says what to use instead";
  for (const char* fine : {"dljob", "jobs", "job_name", "_job", "instance_type", "namespace"}) {
    EXPECT_EQ(ReservedLabelReason(fine), "") << fine;
    EXPECT_TRUE(CheckFamily(WithLabels({{fine, "v"}})).ok()) << fine;
  }
}

TEST(PrometheusTest, RefusesBadNamesSuffixesAndRepeatedLabels) {
  struct Case {
    Family family;
    std::string reason;
  };
  const Case cases[] = {
      {WithLabels({}, "dljob-jobs"), "not a metric name"},
      {WithLabels({{"a-b", "v"}}), "label \"a-b\" is not a label name"},
      {WithLabels({}, "dljob_restarts", MetricType::kCounter), "must end in _total"},
      {WithLabels({}, "dljob_restarts_total", MetricType::kGauge), "must not end in _total"},
      {WithLabels({{"dljob", "a"}, {"dljob", "b"}}), "label \"dljob\" given twice"},
  };
  for (const Case& c : cases) {
    Status s = CheckFamily(c.family);
    EXPECT_FALSE(s.ok()) << c.family.name;
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.message();
    EXPECT_FALSE(RenderText({c.family}).ok()) << c.family.name;
  }
  EXPECT_TRUE(CheckFamily(WithLabels({}, "dljob_restarts_total", MetricType::kCounter)).ok());
  EXPECT_TRUE(CheckFamily(WithLabels({}, "dljob:ratio", MetricType::kGauge)).ok());
}

// Observations into cumulative buckets, +Inf last, then _sum and _count, per label set (sorted);
// a value on a bound counts in that bucket (le is "less than or equal").
TEST(PrometheusTest, HistogramRendersCumulativeBucketsSumAndCount) {
  Histogram h("dljob_wait_seconds", "Waits.", {1, 5}, {"namespace"});
  h.Observe({"b"}, 0.5);
  h.Observe({"a"}, 1);
  h.Observe({"a"}, 3);
  h.Observe({"a"}, 60);
  EXPECT_EQ(RenderText({h.Collect()}).value(),
            "# HELP dljob_wait_seconds Waits.\n"
            "# TYPE dljob_wait_seconds histogram\n"
            "dljob_wait_seconds_bucket{namespace=\"a\",le=\"1\"} 1\n"
            "dljob_wait_seconds_bucket{namespace=\"a\",le=\"5\"} 2\n"
            "dljob_wait_seconds_bucket{namespace=\"a\",le=\"+Inf\"} 3\n"
            "dljob_wait_seconds_sum{namespace=\"a\"} 64\n"
            "dljob_wait_seconds_count{namespace=\"a\"} 3\n"
            "dljob_wait_seconds_bucket{namespace=\"b\",le=\"1\"} 1\n"
            "dljob_wait_seconds_bucket{namespace=\"b\",le=\"5\"} 1\n"
            "dljob_wait_seconds_bucket{namespace=\"b\",le=\"+Inf\"} 1\n"
            "dljob_wait_seconds_sum{namespace=\"b\"} 0.5\n"
            "dljob_wait_seconds_count{namespace=\"b\"} 1\n");
  Histogram empty("dljob_empty_seconds", "None yet.", {1}, {});
  EXPECT_EQ(RenderText({empty.Collect()}).value(),
            "# HELP dljob_empty_seconds None yet.\n# TYPE dljob_empty_seconds histogram\n");
}

TEST(PrometheusTest, RefusesHistogramsThatBreakTheConventions) {
  auto why = [](Family f) { return CheckFamily(f).message(); };
  EXPECT_NE(why({"w_seconds_count", "", MetricType::kHistogram, {}}).find("must not end in _count"),
            std::string::npos);
  EXPECT_NE(why({"w_seconds", "", MetricType::kHistogram, {{{}, 1, ""}}})
                .find("a histogram's are _bucket, _sum and _count"),
            std::string::npos);
  EXPECT_NE(why({"w_seconds", "", MetricType::kHistogram, {{{}, 1, "_bucket"}}})
                .find("needs an \"le\" label"),
            std::string::npos);
  EXPECT_NE(why({"w_seconds", "", MetricType::kHistogram, {{{{"le", "1"}}, 1, "_sum"}}})
                .find("reserved for a histogram's _bucket"),
            std::string::npos);
  EXPECT_NE(why({"g", "", MetricType::kGauge, {{{{"le", "1"}}, 1}}}).find("reserved"),
            std::string::npos);
  EXPECT_NE(why({"g", "", MetricType::kGauge, {{{}, 1, "_sum"}}}).find("only a histogram's"),
            std::string::npos);
  EXPECT_NE(
      why({"w_seconds", "", MetricType::kHistogram, {{{{"job", "x"}, {"le", "1"}}, 1, "_bucket"}}})
          .find("reserved by Prometheus"),
      std::string::npos);
}

}  // namespace
}  // namespace dljob::metrics
