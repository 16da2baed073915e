#include "operator/controller/queue_scheduler.h"

#include <algorithm>
#include <cstdio>
#include <thread>
#include <utility>

#include "jobs/dlqueue_codec.h"
#include "operator/controller/queue_snapshot.h"
#include "scheduler/queue/job_queue.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

std::string KeyOf(const Json& o) {
  const Json& m = o.value("metadata", Json::object());
  return m.value("namespace", "") + "/" + m.value("name", "");
}

}  // namespace

QueueScheduler::QueueScheduler(kube::Api& api, const Clock& clock, QueueSources sources,
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

void QueueScheduler::Run(std::stop_token stop) {
  std::stop_callback wake(stop, [this] { Trigger(); });
  while (!stop.stop_requested()) {
    {
      MutexLock lock(mu_);
      auto until = std::chrono::steady_clock::now() + options_.resync;
      if (next_change_) {
        until =
            std::min(until, std::chrono::steady_clock::now() +
                                std::chrono::duration_cast<kube::Duration>(*next_change_ - clock_.Now()));
      }
      while (!triggered_ && !stop.stop_requested() && std::chrono::steady_clock::now() < until) {
        cv_.wait_until(mu_, until);
      }
    }
    if (stop.stop_requested()) return;
    std::this_thread::sleep_for(options_.batch);  // a burst of changes makes one pass
    {
      MutexLock lock(mu_);
      triggered_ = false;  // what triggers from here on is seen by the pass or makes another
    }
    RunOnce();
  }
}

std::optional<scheduler::Decision> QueueScheduler::RunOnce() {
  const WallTime now = clock_.Now();
  std::vector<Json> jobs = sources_.jobs.List();
  std::map<std::string, std::vector<Json>> pods_of;
  for (const Json& job : jobs) pods_of[KeyOf(job)] = sources_.pods.ByIndex(KeyOf(job));
  std::vector<Json> queues = sources_.queues.List();
  QueueSnapshot snap = BuildQueueSnapshot(jobs, pods_of, queues, ledger_.View(), book_, now);
  const int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  Result<scheduler::Decision> decision = scheduler::ScheduleSnapshot(
      snap.queues, snap.jobs, snap.nodes, now_s, policy_, options_.queue);
  if (!decision.ok()) {
    std::fprintf(stderr, "dljob-operator: queue pass: %s\n", decision.status().message().c_str());
    return std::nullopt;
  }
  for (const std::string& key : book_.Record(*decision, snap.running, snap.leaving, now)) {
    wake_(key);
  }
  {
    MutexLock lock(mu_);
    next_change_.reset();
    if (decision->next_change) {
      next_change_ = WallTime(std::chrono::seconds(*decision->next_change));
    }
  }
  if (snap.queues_defined) WriteStatuses(QueueStatuses(snap, *decision));
  return std::move(decision).value();
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
