#include "operator/controller/start_estimates.h"

#include <chrono>
#include <optional>
#include <unordered_map>

#include "base/time_format.h"

namespace dljob::controller {
namespace {

std::string KeyOf(const DLJob& job) { return job.metadata.namespace_ + "/" + job.metadata.name; }

std::optional<int64_t> UnixSecondsOf(const std::string& rfc3339) {
  std::optional<WallTime> t = ParseRfc3339(rfc3339);
  if (!t) return std::nullopt;
  return UnixSeconds(*t);
}

// Where the job's progress says its run ends; nullopt without a step, a total or a rate.
std::optional<int64_t> ProgressEnd(const DLJob& job, const StepRates& rates) {
  const std::optional<Throughput>& t = job.status.throughput;
  if (!t || !t->step || !t->total_steps) return std::nullopt;
  std::optional<int64_t> at = UnixSecondsOf(t->updated_at);
  std::optional<double> rate = rates.Rate(KeyOf(job));
  if (!at || !rate) return std::nullopt;
  return scheduler::EndFromProgress(*t->step, *t->total_steps, *rate, *at);
}

}  // namespace

void ObserveProgress(const std::vector<QueuedJobPtr>& jobs, StepRates& rates) {
  for (const QueuedJobPtr& queued : jobs) {
    const DLJob& job = queued->job;
    const std::optional<Throughput>& t = job.status.throughput;
    if (job.status.phase != JobPhase::kRunning || !t || !t->step) continue;
    if (std::optional<int64_t> at = UnixSecondsOf(t->updated_at)) {
      rates.Observe(KeyOf(job), *t->step, *at);
    }
  }
  rates.Sweep();
}

std::vector<scheduler::EstimateJob> EstimateInputs(const QueueSnapshot& snapshot,
                                                   const std::vector<QueuedJobPtr>& jobs,
                                                   const StepRates& rates) {
  std::unordered_map<std::string, const DLJob*> by_key;
  for (const QueuedJobPtr& queued : jobs) by_key[KeyOf(queued->job)] = &queued->job;
  std::vector<scheduler::EstimateJob> out;
  out.reserve(snapshot.jobs.size());
  for (const scheduler::JobSnapshot& js : snapshot.jobs) {
    scheduler::EstimateJob e{js, {}, std::nullopt};
    if (js.placement) {
      auto it = by_key.find(js.request.name);
      std::optional<int64_t> progress_end =
          it == by_key.end() ? std::nullopt : ProgressEnd(*it->second, rates);
      e.end = scheduler::ExpectedEndOf(js.request, js.start_time, progress_end);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::map<std::string, scheduler::StartEstimate> ByJob(const scheduler::StartEstimates& estimates) {
  std::map<std::string, scheduler::StartEstimate> out;
  for (const scheduler::StartEstimate& e : estimates.jobs) out[e.job] = e;
  return out;
}

}  // namespace dljob::controller
