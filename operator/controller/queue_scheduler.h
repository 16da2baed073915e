// QueueScheduler: the operator's queue, run over its caches. Each pass reads the DLJobs, their
// pods, the DLQueues and the GPU ledger (queue_snapshot.h), asks the queue core
// (scheduler/queue/job_queue.h) which jobs start, which running ones to suspend for
// them and why each other job waits, records that in the AdmissionBook that the reconciler obeys,
// wakes the reconcilers of the jobs whose verdict changed, and writes each DLQueue's status
// (used, borrowed, running and pending jobs) when it changed.
//
// Passes run on their own thread (Run): soon after Trigger() (a change that can alter any decision:
// a job added, deleted, changed or finished, a queue, a node, a pod going away or bound elsewhere;
// triggers within `batch`, or within the last pass's length when that is longer, share a pass, so
// passes take at most about half of a core, and a fifth after a pass that started, suspended
// and resized nothing: the wait is then four times its length), soon after TriggerIfWaiting() while
// the last pass left a job waiting or acted (a change that matters only then: a running job's
// status as it starts, its pods created where the queue planned them or turning Running), at the
// time the last decision named (a minimum run time ends, an attained-service level changes), and at
// least every `resync`. On a cluster where nothing waits, the stream of running jobs' changes then
// makes no passes over every job. RunOnce() is one pass, for tests. A DLQueue status write that
// fails is left for the next pass. Time and waits come from the injected Clock only: with a
// testing::FakeClock the batch wait is recorded and skipped, and a timed pass runs once the test
// advances the clock (seen within `poll`). With `estimate_every`, a pass also estimates when each
// waiting job will start and hands the estimates to the AdmissionBook, which says them in the jobs'
// messages and status. Thread-safe: Trigger from any thread; Run once.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <stop_token>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "jobs/dlqueue_types.h"
#include "kube/api.h"
#include "kube/runtime/duration.h"
#include "kube/runtime/store.h"
#include "operator/controller/admission.h"
#include "operator/controller/gpu_ledger.h"
#include "operator/controller/job_pods.h"
#include "operator/controller/queue_snapshot.h"
#include "operator/controller/step_rates.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/queue_types.h"

namespace dljob::controller {

struct QueueSchedulerOptions {
  scheduler::QueueOptions queue;  // queue_policy.h's QueueOptionsByName, with the run time set
  kube::Duration batch{std::chrono::milliseconds(20)};
  kube::Duration resync{std::chrono::seconds(30)};
  // How long Run's wait blocks at most before reading the clock again; it bounds how late a timed
  // pass is when the Clock is not the system clock (as WorkQueueOptions::poll).
  kube::Duration poll{std::chrono::milliseconds(200)};
  // How often a pass also estimates when each waiting job starts (start_estimates.h), at least;
  // zero: never. An estimate replays the queue and costs far more than a pass, so the next one
  // waits at least ten times as long as the last one took.
  kube::Duration estimate_every{0};
};

// The caches a pass reads: DLJobs, the jobs' pods indexed by OwnerJobKey, DLQueues.
struct QueueSources {
  const kube::Store& jobs;
  const JobPods& pods;
  const kube::Store& queues;
};

class QueueScheduler {
 public:
  // `wake(key)` asks for the job's reconcile. The policy must outlive the scheduler.
  QueueScheduler(kube::Api& api, Clock& clock, QueueSources sources, GpuLedger& ledger,
                 AdmissionBook& book, const scheduler::PlacementPolicy& policy,
                 QueueSchedulerOptions options, std::function<void(const std::string&)> wake);

  void Trigger() EXCLUDES(mu_);
  void TriggerIfWaiting() EXCLUDES(mu_);
  // Passes until `stop` is requested.
  void Run(std::stop_token stop) EXCLUDES(mu_);
  // One pass now; returns its decision (nullopt when the queue core refused the snapshot).
  std::optional<scheduler::Decision> RunOnce() EXCLUDES(mu_);

 private:
  void WriteStatuses(const std::map<std::string, DLQueueStatus>& statuses);
  // Estimates the waiting jobs' starts from the pass's snapshot and gives them to the book.
  void Estimate(const QueueSnapshot& snap, const std::vector<QueuedJobPtr>& jobs, WallTime now);
  // Blocks until Trigger() (or TriggerIfWaiting() while jobs wait), `stop`, the time the last
  // decision named, or `resync` has passed.
  void WaitForWork(const std::stop_token& stop) EXCLUDES(mu_);
  bool TriggeredLocked() const REQUIRES(mu_) {
    return triggered_ || (triggered_if_waiting_ && waiting_);
  }

  kube::Api& api_;
  Clock& clock_;
  const QueueSources sources_;
  GpuLedger& ledger_;
  AdmissionBook& book_;
  const scheduler::PlacementPolicy& policy_;
  const QueueSchedulerOptions options_;
  const std::function<void(const std::string&)> wake_;
  QueuedJobs queued_;  // the passes' decoded jobs (passes run one at a time)
  StepRates rates_;    // the running jobs' step rates, for estimates
  std::optional<WallTime> next_estimate_;
  // Since when GPUs have been idle, by product: elastic jobs grow onto those idle long enough
  // (scheduler::QueueOptions::grow_after), counted across passes.
  std::map<std::string, int64_t> idle_since_;

  Mutex mu_;
  std::condition_variable_any cv_;
  bool triggered_ GUARDED_BY(mu_) = true;
  bool triggered_if_waiting_ GUARDED_BY(mu_) = false;
  // The last pass left a job waiting, or started, suspended or resized one.
  bool waiting_ GUARDED_BY(mu_) = true;
  std::optional<WallTime> next_change_ GUARDED_BY(mu_);
};

}  // namespace dljob::controller
