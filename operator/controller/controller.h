// Controller: informers → work queue → N workers calling the Reconciler.
//
// Informers keep caches of DLJobs, of DLQueues, of their children (pods, services, config maps,
// secrets that carry the dljob.io/job-name label; pods indexed by their job and kept packed, with
// a typed brief of each in JobPods for the passes over every pod), of nodes and of every
// pod bound to a node (any namespace, slimmed to what the GpuLedger reads); the nodes and the
// bound pods feed the GpuLedger that gang placement uses. Watching every namespace, the bound pods'
// informer leaves out the pods with the job label and the ledger takes those from the job pods'
// informer, so each job pod is watched, decoded and cached once; watching one namespace, it takes
// every bound pod. Every change to a job or a child enqueues
// the job's key (a child's change in the queue's follow-up lane, so a job under way takes its next
// step before new jobs start); a change that frees GPUs (a node added or changed, a bound pod
// finished or deleted) enqueues the jobs that are waiting for GPUs. Every change to a job, a queue,
// a node or a bound pod also triggers the queue scheduler (queue_scheduler.h), whose passes decide
// which jobs may bind their gangs and which are preempted, and wake those jobs. Workers take keys
// from the WorkQueue (never one key twice at once), reconcile, then Forget the key on success,
// AddRateLimited on error, and AddAfter when the reconciler asks to look again (deadlines, TTL,
// waiting for GPUs). Run() blocks until its stop token is requested, then stops the informers and
// workers and returns. Thread-safe: Run() once; the rest from any thread.
//
// Data locality: a job pod that proves a dataset's cache warm on its node gets that recorded on
// the Node (dataset_cache_recorder.h, on the pod informer's thread); placement then prefers the
// node for jobs that read the dataset.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "kube/runtime/informer.h"
#include "kube/runtime/spans.h"
#include "kube/runtime/work_queue.h"
#include "operator/controller/admission.h"
#include "operator/controller/gpu_ledger.h"
#include "operator/controller/job_pods.h"
#include "operator/controller/queue_scheduler.h"
#include "operator/controller/reconciler.h"
#include "scheduler/placement_policy.h"

namespace dljob::controller {

struct ControllerOptions {
  std::string ns;   // "" = every namespace
  int workers = 4;  // reconciles at once
  ReconcilerOptions reconcile;
  kube::WorkQueueOptions queue;
  kube::InformerOptions informer;  // ns and label_selector are set per informer
  // The gang placement policy (scheduler::MakePlacementPolicy's names) and its options.
  // REQUIRES: a name PlacementPolicyNames() lists (the caller validates it; a wrong one aborts).
  std::string placement_policy = "dljob";
  scheduler::PlacementOptions placement;
  // The queue: its policy (queue order, backfill, preemption, minimum run time) and pacing.
  QueueSchedulerOptions scheduling;
  // When a job last made progress (its newest metric line), for progressDeadlineSeconds.
  std::function<std::optional<WallTime>(const std::string& key)> last_progress;
  // Where each job's time goes (kube/runtime/spans.h), or null for nothing: "observe" (an
  // instant: the jobs informer saw the job added), "queue" (its key ready → handed to a worker;
  // detail the lane), "reconcile" (a pass; detail ok, requeue or error), "child" (an instant: a
  // child's change enqueued the job; detail e.g. "pod j-worker-0 updated Running ready"). The
  // pass runs in a SpanScope of the job, so a TracedApi records its calls against it.
  kube::SpanSink* spans = nullptr;
};

class Controller {
 public:
  Controller(kube::Api& api, Clock& clock, ControllerOptions options = {},
             SshKeyGenerator keys = GenerateSshKeyPair);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void Run(std::stop_token stop);
  // Every informer has listed once.
  bool HasSynced() const;
  kube::WorkQueue& queue() { return queue_; }
  const kube::Store& jobs() const { return jobs_->store(); }
  // Pods labelled with a job name, indexed by OwnerJobKey (children.h), packed (Store's compact
  // mode: each read unpacks); JobPods keeps what passes over every pod read of them.
  const kube::Store& pods() const { return pods_->store(); }
  const JobPods& job_pods() const { return job_pods_; }
  // Also tell `handlers` of every change to the jobs' pods (on the informer's thread; they must
  // be quick). REQUIRES: before Run().
  void AddPodHandlers(kube::EventHandlers handlers);
  const GpuLedger& ledger() const { return ledger_; }
  const AdmissionBook& admissions() const { return book_; }

 private:
  void Work();
  // Records an instant span of `key`, when spans are on.
  void Mark(const std::string& key, const char* name, std::string detail);

  Clock& clock_;
  const ControllerOptions options_;
  // Informers, in the order HasSynced and Run go through them.
  std::vector<kube::Informer*> Informers() const;
  void WakeWaiting();

  std::unique_ptr<kube::Informer> jobs_, pods_, services_, config_maps_, secrets_, nodes_,
      bound_pods_, queues_;
  kube::WorkQueue queue_;
  const scheduler::PlacementPolicyPtr policy_;  // before ledger_, which uses it
  GpuLedger ledger_;
  AdmissionBook book_;
  JobPods job_pods_;
  std::unique_ptr<QueueScheduler> scheduler_;
  std::unique_ptr<Reconciler> reconciler_;
};

}  // namespace dljob::controller
