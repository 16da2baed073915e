#include "tools/sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dljob::scheduler::sim {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, double(values.size()))) - 1;
  return values[i];
}

namespace {

// Adds one estimate of a job that first started at `start` (none: never) to the lists.
struct AccuracyLists {
  std::vector<double> error, bias;
  int64_t within = 0, unknown = 0;
  void Add(const EstimateRecord& e, std::optional<int64_t> start) {
    if (!e.time) {
      ++unknown;
      return;
    }
    if (!start) return;
    const double err = static_cast<double>(*e.time - *start);
    error.push_back(std::fabs(err));
    bias.push_back(err);
    within += std::fabs(err) <= 0.25 * static_cast<double>(*start - e.made_at);
  }
  EstimateAccuracy Figures() const {
    EstimateAccuracy a;
    a.count = static_cast<int64_t>(error.size());
    a.unknown = unknown;
    a.median_error = Percentile(error, 50);
    a.p90_error = Percentile(error, 90);
    a.within_25 = error.empty() ? 0 : static_cast<double>(within) / double(error.size());
    a.median_bias = Percentile(bias, 50);
    return a;
  }
};

}  // namespace

Summary Summarize(const Trace& trace, const SimResult& result) {
  Summary s;
  s.policy = result.policy;
  s.jobs = static_cast<int64_t>(trace.jobs.size());
  std::vector<double> jct, wait;
  int64_t first_submit = 0, last_finish = 0;
  for (size_t i = 0; i < trace.jobs.size() && i < result.jobs.size(); ++i) {
    if (i == 0 || trace.jobs[i].submit_time < first_submit)
      first_submit = trace.jobs[i].submit_time;
    const JobOutcome& o = result.jobs[i];
    if (!o.finish) continue;
    ++s.finished;
    s.deadline_exceeded += o.deadline_exceeded;
    const int64_t c = *o.finish - trace.jobs[i].submit_time;
    jct.push_back(static_cast<double>(c));
    wait.push_back(static_cast<double>(c - o.held));
    last_finish = std::max(last_finish, *o.finish);
  }
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  };
  s.avg_jct = mean(jct);
  s.p95_jct = Percentile(jct, 95);
  s.avg_wait = mean(wait);
  s.p95_wait = Percentile(wait, 95);
  s.makespan = s.finished ? last_finish - first_submit : 0;
  if (result.busy_seconds > 0 && result.total_gpus > 0) {
    s.gpu_allocation =
        result.allocated_gpu_seconds / (result.busy_seconds * double(result.total_gpus));
  }
  if (result.queued_seconds > 0 && result.total_gpus > 0) {
    s.gpu_allocation_queued =
        result.queued_allocated_gpu_seconds / (result.queued_seconds * double(result.total_gpus));
  }
  if (result.free_gpu_seconds_while_blocked > 0) {
    s.fragmentation = result.fragmented_gpu_seconds / result.free_gpu_seconds_while_blocked;
  }
  s.preemptions = result.preemptions;
  s.resizes = result.resizes;
  s.wall_seconds = result.wall_seconds;
  if (!result.estimates.empty()) {
    s.estimated = true;
    AccuracyLists all, first;
    for (size_t i = 0; i < result.estimates.size() && i < result.jobs.size(); ++i) {
      const std::vector<EstimateRecord>& records = result.estimates[i];
      if (records.empty()) continue;
      ++s.estimated_jobs;
      first.Add(records.front(), result.jobs[i].first_start);
      for (const EstimateRecord& e : records) all.Add(e, result.jobs[i].first_start);
    }
    s.estimates = all.Figures();
    s.at_submission = first.Figures();
    s.estimate_runs = result.estimate_runs;
    s.estimate_wall_seconds = result.estimate_wall_seconds;
  }
  return s;
}

}  // namespace dljob::scheduler::sim
