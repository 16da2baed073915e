// The queue scheduler's input, read from the operator's caches: which DLJobs run where, which
// wait, the queues, and the nodes as the queue should plan with them; and the DLQueue statuses a
// decision leads to. Pure: informer objects and the GPU ledger's view in, scheduler values out.
//
// How each DLJob counts (finished, deleted, invalid and user-suspended jobs do not count at all):
//   leaving   its suspension is pending (the book says kPreempt) or under way (suspended, but
//             the cache still shows its pods bound): left out of the pass, and its pods' use
//             counted as free, so the queue does not suspend more jobs for room that is coming.
//   running   a worker of its current incarnation is bound (placement: the workers' nodes), or
//             the book admitted it and the admission has not lapsed (placement: where the ledger
//             assumed its workers, else the queue's plan, whose use is added to the nodes).
//   pending   everything else: queued, new, restarting, or waiting after a preemption.
// Pods being deleted (a restart, a suspension) count as free too: they are going. The placement
// the queue plans with is then not free yet on the nodes; the reconciler binds only once the GPU
// ledger (which counts those pods until they are gone) has room.
//
// Queues: with no DLQueue objects in the cluster, queues are off: every queue a job names is one
// without a limit. With DLQueues, only those exist; a job naming another waits (Inadmissible).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "jobs/dljob_types.h"
#include "jobs/dlqueue_types.h"
#include "kube/runtime/store.h"
#include "operator/controller/admission.h"
#include "operator/controller/gpu_ledger.h"
#include "operator/controller/job_pods.h"
#include "scheduler/gang.h"
#include "scheduler/queue/job_queue.h"

namespace dljob::controller {

// When the job's current run got its GPUs: since it became Running (the Running condition's
// transition), or since its workers were bound (Scheduled); nullopt when it has none now.
std::optional<WallTime> RunStart(const DLJobStatus& status);

struct QueueSnapshot {
  std::vector<scheduler::QueueSpec> queues;
  std::vector<scheduler::JobSnapshot> jobs;  // running ones have a placement
  std::vector<scheduler::Node> nodes;        // used: as the queue should see it
  std::vector<std::string> running;          // job keys, for AdmissionBook::Record
  std::vector<std::string> leaving;
  // Every job that counts (running or pending): its queue and its GPUs, for the queue statuses.
  struct JobQueueEntry {
    std::string queue;
    std::string gpu_product;
    int64_t gpus = 0;
  };
  std::map<std::string, JobQueueEntry> entries;
  bool queues_defined = false;  // there are DLQueue objects
};

// A DLJob the queue orders: decoded, defaulted and valid, neither finished, deleting nor
// suspended; with what a queue pass reads of it for every job, derived once per version of the
// object.
struct QueuedJob {
  DLJob job;
  std::string key;                   // "namespace/name"
  scheduler::JobRequest request;     // its gang, queue, priority, ...; submit_time: see `created`
  std::optional<int64_t> created;    // metadata.creationTimestamp, Unix seconds (unreadable: none)
  std::optional<int64_t> run_start;  // RunStart(job.status), Unix seconds
  std::vector<std::string> worker_keys;  // "namespace/<worker i>" for each of the gang's workers
};
using QueuedJobPtr = std::shared_ptr<const QueuedJob>;

// The queued job of a DLJob object; null for any other object.
QueuedJobPtr QueuedJobOf(const nlohmann::json& object);

// Whether a DLJob's change from `before` to `after` can change what the queue decides when no job
// waits: its spec changed (suspended, resumed, resized, another queue or priority), its deletion
// began, or it finished (or was run again). Its other changes (its status as it starts and runs)
// matter only while jobs wait (QueueScheduler::TriggerIfWaiting).
bool ChangesQueue(const nlohmann::json& before, const nlohmann::json& after);

// QueuedJobOf over an informer's objects, each version decoded once: the informer replaces an
// object's pointer on every change, so a pointer seen in the last call is the same version and
// its decode is reused. A pass over thousands of waiting jobs then decodes only those that
// changed. Not thread-safe (one queue pass at a time).
class QueuedJobs {
 public:
  // The queued jobs among `objects`, in their order.
  std::vector<QueuedJobPtr> Refresh(const kube::Objects& objects);
  size_t decoded() const { return decoded_; }  // decodes so far, for tests

 private:
  struct Entry {
    kube::ObjectPtr object;  // keeps the pointer from being reused by another object
    QueuedJobPtr queued;
    uint64_t seen = 0;
  };
  std::unordered_map<const nlohmann::json*, Entry> by_object_;
  uint64_t refresh_ = 0;
  size_t decoded_ = 0;
};

// `jobs`: the queued jobs (QueuedJobs); `pods_of`: a job key's pods (JobPods::OfJob);
// `queue_objects`: DLQueue objects; `ledger`: the GPU ledger's view; `book`: the admissions so far.
// Times in Unix seconds come from `now`.
QueueSnapshot BuildQueueSnapshot(const std::vector<QueuedJobPtr>& jobs,
                                 const std::function<PodBriefs(const std::string&)>& pods_of,
                                 const std::vector<nlohmann::json>& queue_objects,
                                 const LedgerView& ledger, const AdmissionBook& book, WallTime now);
// The same over DLJob objects (each decoded) and a map of their pods (each read by BriefOf), for
// tests.
QueueSnapshot BuildQueueSnapshot(const kube::Objects& jobs,
                                 const std::map<std::string, kube::Objects>& pods_of,
                                 const std::vector<nlohmann::json>& queue_objects,
                                 const LedgerView& ledger, const AdmissionBook& book, WallTime now);

// The status of every defined queue once `decision` is carried out: GPUs used and borrowed per
// quota entry (the job's product when the queue has an entry for it, else ""), and its running
// and pending jobs. Queues with no jobs report zeros.
std::map<std::string, DLQueueStatus> QueueStatuses(const QueueSnapshot& snapshot,
                                                   const scheduler::Decision& decision);

}  // namespace dljob::controller
