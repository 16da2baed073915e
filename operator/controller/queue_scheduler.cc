#include "operator/controller/queue_scheduler.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "base/time_format.h"
#include "jobs/dlqueue_codec.h"
#include "kube/object_fields.h"
#include "operator/controller/queue_snapshot.h"
#include "operator/controller/start_estimates.h"
#include "scheduler/queue/job_queue.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

// The pass started, suspended or resized a job.
bool Acted(const scheduler::Decision& d) {
  return !d.start.empty() || !d.preempt.empty() || !d.resize.empty();
}

}  // namespace

QueueScheduler::QueueScheduler(kube::Api& api, Clock& clock, QueueSources sources,
                               GpuLedger& ledger, AdmissionBook& book,
                               const scheduler::PlacementPolicy& policy,
                               QueueSchedulerOptions options,
                               std::function<void(const std::string&)> wake)
    : api_(api),
      clock_(clock),
      sources_(sources),
      ledger_(ledger),
      book_(book),
      policy_(policy),
      options_(std::move(options)),
      wake_(std::move(wake)) {}

void QueueScheduler::Trigger() {
  {
    MutexLock lock(mu_);
    triggered_ = true;
  }
  cv_.notify_all();
}

void QueueScheduler::TriggerIfWaiting() {
  bool wake = false;
  {
    MutexLock lock(mu_);
    triggered_if_waiting_ = true;
    wake = waiting_;
  }
  if (wake) cv_.notify_all();
}

void QueueScheduler::WaitForWork(const std::stop_token& stop) {
  MutexLock lock(mu_);
  Clock::Duration wait = options_.resync;
  if (next_change_) wait = std::min<Clock::Duration>(wait, *next_change_ - clock_.Now());
  const Clock::MonotonicTime until = clock_.MonotonicNow() + wait;
  while (!TriggeredLocked() && !stop.stop_requested()) {
    const Clock::Duration left = until - clock_.MonotonicNow();
    if (left <= Clock::Duration::zero()) return;
    cv_.wait_for(mu_, std::min<Clock::Duration>(left, options_.poll));
  }
}

void QueueScheduler::Run(std::stop_token stop) {
  std::stop_callback wake(stop, [this] { Trigger(); });
  kube::Duration last_pass{0};
  bool acted = true;
  while (!stop.stop_requested()) {
    WaitForWork(stop);
    if (stop.stop_requested()) return;
    // A burst of changes makes one pass; and passes, each over every job, take at most about
    // half of a core however fast the changes come: the wait is at least the last pass's length.
    // After a pass that started, suspended and resized nothing (jobs wait and none fits), at
    // most a fifth: four times its length.
    clock_.SleepFor(std::max<kube::Duration>(options_.batch, acted ? last_pass : 4 * last_pass));
    {
      MutexLock lock(mu_);
      triggered_ = false;  // what triggers from here on is seen by the pass or makes another
      triggered_if_waiting_ = false;
    }
    const Clock::MonotonicTime start = clock_.MonotonicNow();
    const std::optional<scheduler::Decision> decision = RunOnce();
    last_pass = std::chrono::duration_cast<kube::Duration>(clock_.MonotonicNow() - start);
    acted = decision && Acted(*decision);
  }
}

std::optional<scheduler::Decision> QueueScheduler::RunOnce() {
  const WallTime now = clock_.Now();
  // The caches' shared objects: a pass over every job and pod copies none of them.
  // Only the jobs that changed since the last pass are decoded again.
  std::vector<QueuedJobPtr> jobs = queued_.Refresh(sources_.jobs.All());
  auto pods_of = [this](const std::string& key) { return sources_.pods.OfJob(key); };
  std::vector<Json> queues = sources_.queues.List();
  QueueSnapshot snap = BuildQueueSnapshot(jobs, pods_of, queues, ledger_.View(), book_, now);
  const int64_t now_s = UnixSeconds(now);
  Result<scheduler::Decision> decision = scheduler::ScheduleSnapshot(
      snap.queues, snap.jobs, snap.nodes, now_s, policy_, options_.queue, &idle_since_);
  if (!decision.ok()) {
    std::fprintf(stderr, "dljob-operator: queue pass: %s\n", decision.status().message().c_str());
    return std::nullopt;
  }
  if (options_.estimate_every > kube::Duration::zero()) {
    ObserveProgress(jobs, rates_);  // every pass, so a run's step rate is there when it is due
    if (!decision->waiting.empty() && (!next_estimate_ || now >= *next_estimate_)) {
      Estimate(snap, jobs, now);
    }
  }
  for (const std::string& key : book_.Record(*decision, snap.running, snap.leaving, now)) {
    wake_(key);
  }
  {
    MutexLock lock(mu_);
    waiting_ = !decision->waiting.empty() || Acted(*decision) || !snap.leaving.empty();
    next_change_.reset();
    if (decision->next_change) {
      next_change_ = WallTime(std::chrono::seconds(*decision->next_change));
    }
    if (std::optional<WallTime> due = book_.RestateDue()) {  // a waiting job's held-back message
      if (!next_change_ || *due < *next_change_) next_change_ = due;
    }
  }
  if (snap.queues_defined) WriteStatuses(QueueStatuses(snap, *decision));
  return std::move(decision).value();
}

void QueueScheduler::Estimate(const QueueSnapshot& snap, const std::vector<QueuedJobPtr>& jobs,
                              WallTime now) {
  const Clock::MonotonicTime start = clock_.MonotonicNow();
  Result<scheduler::StartEstimates> estimates =
      scheduler::EstimateStarts(snap.queues, EstimateInputs(snap, jobs, rates_), snap.nodes,
                                UnixSeconds(now), policy_, options_.queue);
  if (estimates.ok()) {
    book_.SetEstimates(ByJob(*estimates));
  } else {
    std::fprintf(stderr, "dljob-operator: start estimates: %s\n",
                 estimates.status().message().c_str());
  }
  const auto took = std::chrono::duration_cast<kube::Duration>(clock_.MonotonicNow() - start);
  next_estimate_ = now + std::max<kube::Duration>(options_.estimate_every, 10 * took);
}

void QueueScheduler::WriteStatuses(const std::map<std::string, DLQueueStatus>& statuses) {
  for (const Json& object : sources_.queues.List()) {
    QueueDecodeResult d = DecodeQueueTree(object);
    auto it = statuses.find(d.queue.metadata.name);
    if (it == statuses.end() || d.queue.status == it->second) continue;
    d.queue.status = it->second;
    Json out = object;
    out["status"] = EncodeQueueTree(d.queue)["status"];
    kube::ApiResult<Json> r = api_.ReplaceStatus(kube::resources::kDLQueues, "", out);
    if (!r.ok() && !r.error().IsConflict()) {
      std::fprintf(stderr, "dljob-operator: writing the status of queue %s: %s\n",
                   d.queue.metadata.name.c_str(), r.error().ToString().c_str());
    }
  }
}

}  // namespace dljob::controller
