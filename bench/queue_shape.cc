#include "bench/queue_shape.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "bench/phase_breakdown.h"

namespace dljob::bench {

QueueShape Scaled(QueueShape shape, double scale) {
  for (SizeClass& c : shape.classes) {
    c.count = std::max(1, static_cast<int>(std::lround(c.count * scale)));
  }
  return shape;
}

std::string CohortName(int cohort) { return "cohort-" + std::to_string(cohort); }

std::string QueueName(int cohort, int queue) {
  return CohortName(cohort) + "-queue-" + std::to_string(queue);
}

std::vector<PlannedJob> Plan(const QueueShape& shape) {
  std::vector<PlannedJob> jobs;
  for (int c = 0; c < shape.cohorts; ++c) {
    for (int q = 0; q < shape.queues_per_cohort; ++q) {
      const std::string queue = QueueName(c, q);
      for (size_t s = 0; s < shape.classes.size(); ++s) {
        const SizeClass& size = shape.classes[s];
        for (int i = 0; i < size.count; ++i) {
          jobs.push_back({queue + "-" + size.name + "-" + std::to_string(i), queue,
                          static_cast<int>(s), int64_t{i} * size.interval_ms});
        }
      }
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const PlannedJob& a, const PlannedJob& b) {
    return std::tie(a.submit_ms, a.name) < std::tie(b.submit_ms, b.name);
  });
  return jobs;
}

nlohmann::json QueueObject(const QueueShape& shape, int cohort, int queue) {
  return {
      {"apiVersion", "dljob.io/v1alpha1"},
      {"kind", "DLQueue"},
      {"metadata", {{"name", QueueName(cohort, queue)}}},
      {"spec",
       {{"cohort", CohortName(cohort)},
        {"quotas", {{{"nominal", shape.nominal}, {"borrowingLimit", shape.borrowing_limit}}}}}}};
}

nlohmann::json JobObject(const QueueShape& shape, const PlannedJob& job, const std::string& ns) {
  const SizeClass& size = shape.classes[job.size];
  return {
      {"apiVersion", "dljob.io/v1alpha1"},
      {"kind", "DLJob"},
      {"metadata",
       {{"name", job.name}, {"namespace", ns}, {"labels", {{"bench.dljob.io/size", size.name}}}}},
      {"spec",
       {{"image", "dljob/trainer:cpu"},
        {"command", {"dljob-train", "--model=resnet50", "--data_name=synthetic"}},
        {"gpus", size.gpus},
        {"gpusPerWorker", size.gpus},
        {"scheduling", {{"queue", job.queue}, {"priority", size.priority}}}}}};
}

std::vector<ClassSummary> SummarizeByClass(const QueueShape& shape, const std::vector<int>& sizes,
                                           const std::vector<double>& seconds) {
  std::vector<ClassSummary> out;
  for (size_t s = 0; s < shape.classes.size(); ++s) {
    std::vector<double> times;
    for (size_t i = 0; i < sizes.size() && i < seconds.size(); ++i) {
      if (sizes[i] == static_cast<int>(s)) times.push_back(seconds[i]);
    }
    ClassSummary summary;
    summary.name = shape.classes[s].name;
    summary.jobs = static_cast<int>(times.size());
    if (!times.empty()) {
      std::sort(times.begin(), times.end());
      summary.mean = std::accumulate(times.begin(), times.end(), 0.0) / times.size();
      summary.p50 = Quantile(times, 0.50);
      summary.p90 = Quantile(times, 0.90);
      summary.p99 = Quantile(times, 0.99);
      summary.max = times.back();
    }
    out.push_back(summary);
  }
  return out;
}

}  // namespace dljob::bench
