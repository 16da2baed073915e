#include "operator/metrics/job_metrics.h"

#include <gtest/gtest.h>

namespace dljob::metrics {
namespace {

using Json = nlohmann::json;

const Family& Find(const std::vector<Family>& families, const std::string& name) {
  for (const Family& f : families) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << "no family " << name;
  static Family none;
  return none;
}

TEST(JobMetricsTest, ExportsEachJobsStatusAndCountsPhases) {
  std::vector<Json> jobs = {
      Json::parse(R"({"metadata":{"namespace":"a","name":"resnet"},"spec":{"gpus":16},
        "status":{"phase":"Running","restarts":2,
                  "throughput":{"imagesPerSec":2950.5,"step":100,"loss":1.25}}})"),
      Json::parse(R"({"metadata":{"namespace":"b","name":"new"},"spec":{"gpus":8}})"),
      Json::parse(R"({"metadata":{"namespace":"b","name":"waits"},"spec":{"gpus":8},
        "status":{"phase":"Queued","startEstimate":{"time":"2026-11-27T21:52:00Z",
                  "basis":"Progress","assumption":"when a/resnet ends in about 12 min"}}})"),
  };
  std::map<std::string, LogCounts> logs = {{"a/resnet", {120, 10}}};
  std::vector<Family> f = JobFamilies(jobs, logs);
  for (const Family& family : f) {
    Status s = CheckFamily(family);  // Prometheus's naming rules, reserved labels included
    EXPECT_TRUE(s.ok()) << s.message();
  }
  ASSERT_TRUE(RenderText(f).ok());

  const Family& phases = Find(f, "dljob_jobs");
  std::map<std::string, double> by_phase;
  for (const Sample& s : phases.samples) by_phase[s.labels.at(0).second] = s.value;
  EXPECT_EQ(by_phase["Running"], 1);
  EXPECT_EQ(by_phase["Queued"], 2);  // no status yet counts as Queued
  EXPECT_EQ(by_phase["Failed"], 0);
  EXPECT_EQ(by_phase.size(), 8u);

  const Family& ips = Find(f, "dljob_job_images_per_second");
  ASSERT_EQ(ips.samples.size(), 1u);  // the new job has no throughput: left out, not zero
  // `dljob`, not `job`: Prometheus renames a scraped `job` label to `exported_job`.
  EXPECT_EQ(ips.samples[0].labels, (Labels{{"namespace", "a"}, {"dljob", "resnet"}}));
  EXPECT_DOUBLE_EQ(ips.samples[0].value, 2950.5);

  EXPECT_EQ(Find(f, "dljob_job_restarts_total").samples.size(), 3u);
  EXPECT_EQ(Find(f, "dljob_job_restarts_total").samples[0].value, 2);
  EXPECT_EQ(Find(f, "dljob_job_restarts_total").type, MetricType::kCounter);
  EXPECT_EQ(Find(f, "dljob_job_gpus").samples[1].value, 8);
  EXPECT_EQ(Find(f, "dljob_job_step").samples[0].value, 100);
  EXPECT_EQ(Find(f, "dljob_job_log_lines_total").samples.size(), 1u);
  EXPECT_EQ(Find(f, "dljob_job_metric_lines_total").samples[0].value, 10);
  const Family& phase = Find(f, "dljob_job_phase");
  ASSERT_EQ(phase.samples.size(), 3u);
  const Family& estimated = Find(f, "dljob_job_estimated_start_time_seconds");
  ASSERT_EQ(estimated.samples.size(), 1u);  // only the job with an estimate
  EXPECT_EQ(estimated.samples[0].labels, (Labels{{"namespace", "b"}, {"dljob", "waits"}}));
  EXPECT_EQ(estimated.samples[0].value, 1795816320);  // 2026-11-27T21:52:00Z
  EXPECT_EQ(phase.samples[0].labels,
            (Labels{{"namespace", "a"}, {"dljob", "resnet"}, {"phase", "Running"}}));
  EXPECT_NE(RenderText(f).value().find(
                "dljob_job_images_per_second{namespace=\"a\",dljob=\"resnet\"} 2950.5\n"),
            std::string::npos);
}

TEST(JobMetricsTest, IgnoresFieldsOfTheWrongType) {
  std::vector<Json> jobs = {Json::parse(
      R"({"metadata":{"namespace":"a","name":"x"},"spec":{"gpus":"many"},
          "status":{"phase":"Running","throughput":{"imagesPerSec":"fast"}}})")};
  std::vector<Family> f = JobFamilies(jobs);
  EXPECT_TRUE(Find(f, "dljob_job_gpus").samples.empty());
  EXPECT_TRUE(Find(f, "dljob_job_images_per_second").samples.empty());
  EXPECT_EQ(RenderText(f).value().find("many"), std::string::npos);
}

TEST(JobMetricsTest, TimingHistogramsByNamespaceAndQueue) {
  JobTimingHistograms h;
  h.ObserveStart("team-a", 42);
  h.ObserveQueueWait("team-a", "default", 7);
  h.ObserveQueueWait("team-a", "default", 4000);
  std::vector<Family> f = h.Families();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].name, "dljob_job_start_duration_seconds");
  EXPECT_EQ(f[1].name, "dljob_job_queue_wait_seconds");
  std::string text = RenderText(f).value();
  EXPECT_NE(
      text.find("dljob_job_start_duration_seconds_bucket{namespace=\"team-a\",le=\"30\"} 0\n"
                "dljob_job_start_duration_seconds_bucket{namespace=\"team-a\",le=\"60\"} 1\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("dljob_job_queue_wait_seconds_count{namespace=\"team-a\",queue=\"default\"} 2\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("dljob_job_queue_wait_seconds_sum{namespace=\"team-a\",queue=\"default\"} 4007\n"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace dljob::metrics
