#include "operator/controller/queue_snapshot.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "base/json_fields.h"
#include "base/time_format.h"
#include "jobs/codec.h"
#include "jobs/conditions.h"
#include "jobs/defaults.h"
#include "jobs/dlqueue_codec.h"
#include "jobs/validation.h"
#include "kube/object_fields.h"
#include "operator/controller/builders.h"
#include "operator/controller/children.h"
#include "scheduler/gang.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

void Add(scheduler::Resources& to, const scheduler::Resources& r, int sign) {
  to.gpus += sign * r.gpus;
  to.cpu_milli += sign * r.cpu_milli;
  to.memory_mib += sign * r.memory_mib;
  to.pods += sign * r.pods;
}

// Node names to indexes of `nodes`.
class NodeIndex {
 public:
  explicit NodeIndex(std::vector<scheduler::Node>& nodes) : nodes_(nodes) {
    for (size_t i = 0; i < nodes.size(); ++i) index_[nodes[i].name] = i;
  }
  void Use(const std::string& node, const scheduler::Resources& r, int sign) {
    auto it = index_.find(node);
    if (it == index_.end()) return;
    scheduler::Resources& used = nodes_[it->second].used;
    Add(used, r, sign);
    used.gpus = std::max<int64_t>(used.gpus, 0);
    used.cpu_milli = std::max<int64_t>(used.cpu_milli, 0);
    used.memory_mib = std::max<int64_t>(used.memory_mib, 0);
    used.pods = std::max<int64_t>(used.pods, 0);
  }

 private:
  std::vector<scheduler::Node>& nodes_;
  std::map<std::string, size_t> index_;
};

std::vector<scheduler::QueueSpec> DefinedQueues(const std::vector<Json>& objects) {
  std::vector<scheduler::QueueSpec> out;
  for (const Json& o : objects) {
    QueueDecodeResult d = DecodeQueueTree(o);
    if (!d.ok() || !Validate(d.queue).empty()) continue;  // the API server's schema refuses these
    scheduler::QueueSpec spec;
    spec.name = d.queue.metadata.name;
    spec.cohort = d.queue.spec.cohort;
    for (const QueueQuota& q : d.queue.spec.quotas) {
      scheduler::QueueQuota& quota = spec.quotas[q.gpu_product];
      quota.nominal = q.nominal.value_or(0);
      quota.borrowing_limit = q.borrowing_limit.value_or(scheduler::kUnlimited);
    }
    out.push_back(std::move(spec));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

bool Finished(const Json& object) {
  std::optional<JobPhase> phase = ParsePhase(StringAt(FieldOf(object, "status"), "phase"));
  return phase && IsFinished(*phase);
}

}  // namespace

QueuedJobPtr QueuedJobOf(const Json& object) {
  if (IsDeleting(object)) return nullptr;
  // Finished jobs are most of a busy cluster's: they are passed over before being decoded.
  if (Finished(object)) return nullptr;
  DecodeResult decoded = DecodeTree(object);
  if (!decoded.errors.empty()) return nullptr;
  DLJob job = std::move(decoded.job);
  ApplyDefaults(job);
  if (job.spec.run_policy.suspend.value_or(false)) return nullptr;
  if (!Validate(job).empty()) return nullptr;
  Result<scheduler::Gang> gang = scheduler::GangOf(job);
  if (!gang.ok()) return nullptr;
  auto q = std::make_shared<QueuedJob>();
  q->key = job.metadata.namespace_ + "/" + job.metadata.name;
  scheduler::JobRequest& r = q->request;
  r.name = q->key;
  r.queue = job.spec.scheduling.queue.value_or(scheduler::kDefaultQueue);
  r.priority = job.spec.scheduling.priority.value_or(0);
  r.time_limit = job.spec.run_policy.active_deadline_seconds;
  r.gang = std::move(*gang);
  if (const std::optional<WorkerRange> range = ElasticWorkers(job)) {
    r.elastic = scheduler::ElasticRange{range->min, range->max};
  }
  if (std::optional<WallTime> t = ParseRfc3339(job.metadata.creation_timestamp)) {
    q->created = UnixSeconds(*t);
  }
  if (std::optional<WallTime> t = RunStart(job.status)) q->run_start = UnixSeconds(*t);
  for (int64_t i = 0; i < r.gang.workers; ++i) {
    q->worker_keys.push_back(job.metadata.namespace_ + "/" + WorkerName(job, i));
  }
  q->job = std::move(job);
  return q;
}

bool ChangesQueue(const Json& before, const Json& after) {
  return FieldOf(before, "spec") != FieldOf(after, "spec") ||
         IsDeleting(before) != IsDeleting(after) || Finished(before) != Finished(after);
}

std::vector<QueuedJobPtr> QueuedJobs::Refresh(const kube::Objects& objects) {
  ++refresh_;
  std::vector<QueuedJobPtr> out;
  for (const kube::ObjectPtr& object : objects) {
    Entry& e = by_object_[object.get()];
    if (!e.object) {
      e.object = object;
      e.queued = QueuedJobOf(*object);
      ++decoded_;
    }
    e.seen = refresh_;
    if (e.queued) out.push_back(e.queued);
  }
  std::erase_if(by_object_, [this](const auto& entry) { return entry.second.seen != refresh_; });
  return out;
}

namespace {

// The nodes of a job's workers of its incarnation that are bound and live, by index ("" for the
// others).
struct BoundWorkers {
  std::vector<std::string> nodes;
  bool any = false;
};

// Fills a QueueSnapshot one job at a time, counting on the nodes what pods going away free and
// what admitted gangs not yet in the ledger will use.
class SnapshotBuilder {
 public:
  SnapshotBuilder(const std::vector<Json>& queue_objects, const LedgerView& ledger,
                  const AdmissionBook& book, WallTime now)
      : snap_(Empty(queue_objects, ledger)),
        nodes_(snap_.nodes),
        ledger_(ledger),
        book_(book),
        now_(now),
        now_s_(UnixSeconds(now)) {}

  // Adds a queued job with its pods: as leaving (being preempted), or as waiting or running,
  // with its placement when its gang is bound or planned.
  void Add(const QueuedJob& q, const PodBriefs& pods) {
    const DLJob& job = q.job;
    const std::string& key = q.key;
    const scheduler::Gang& gang = q.request.gang;
    const BoundWorkers bound = Bound(q, pods);
    const Admission admission = book_.Get(key);
    const bool suspending =
        admission.verdict == Verdict::kPreempt ||
        (admission.verdict == Verdict::kWaiting && admission.reason == "Preempted" && bound.any);
    if (suspending) {
      for (const PodBriefPtr& pod : pods) {
        if (pod->Live()) FreePod(*pod);
      }
      snap_.leaving.push_back(key);
      return;
    }
    scheduler::JobSnapshot js = Request(q);
    const int64_t planned_size = static_cast<int64_t>(admission.placement.worker_nodes.size());
    const bool planned = admission.verdict == Verdict::kAdmitted &&
                         !book_.Lapsed(admission, now_) && Fits(js.request, planned_size);
    int64_t size = gang.workers;
    if (planned) {
      size = planned_size;
    } else if (js.request.elastic && job.status.workers &&
               Fits(js.request, job.status.workers->desired)) {
      size = job.status.workers->desired;  // the size its run was made with
    }
    if (bound.any || planned) {
      js.placement = PlacementOf(q, bound, planned ? &admission.placement : nullptr, size);
      snap_.running.push_back(key);
    } else {
      size = gang.workers;
    }
    snap_.entries[key] = {js.request.queue, gang.gpu_model, size * gang.per_worker.gpus};
    named_queues_.insert(js.request.queue);
    snap_.jobs.push_back(std::move(js));
  }

  // The snapshot; without DLQueues defined, every queue a job names, unlimited.
  QueueSnapshot Take() && {
    if (!snap_.queues_defined) {
      for (const std::string& q : named_queues_) {
        snap_.queues.push_back(scheduler::UnlimitedQueue(q));
      }
    }
    return std::move(snap_);
  }

 private:
  static QueueSnapshot Empty(const std::vector<Json>& queue_objects, const LedgerView& ledger) {
    QueueSnapshot snap;
    snap.nodes = ledger.nodes;
    snap.queues = DefinedQueues(queue_objects);
    snap.queues_defined = !queue_objects.empty();
    return snap;
  }

  // What a pod counted by the ledger stops using when it goes.
  void FreePod(const PodBrief& pod) {
    auto it = ledger_.pods.find(pod.key);
    if (it == ledger_.pods.end()) return;
    nodes_.Use(it->second.node, it->second.requests, -1);
    freed_.insert(it->first);
  }

  // The workers of this incarnation bound and live, by index; every other pod is going (those
  // being deleted free their nodes here).
  BoundWorkers Bound(const QueuedJob& q, const PodBriefs& pods) {
    const int64_t incarnation = JobIncarnation(q.job.status);
    BoundWorkers bound;
    bound.nodes.resize(q.worker_keys.size());
    for (const PodBriefPtr& shared : pods) {
      const PodBrief& pod = *shared;
      if (!pod.Live()) {
        if (pod.deleting) FreePod(pod);
        continue;
      }
      if (pod.incarnation != incarnation || !pod.worker || pod.node.empty()) continue;
      const auto it = std::find(q.worker_keys.begin(), q.worker_keys.end(), pod.key);
      if (it == q.worker_keys.end()) continue;
      bound.nodes[it - q.worker_keys.begin()] = pod.node;
      bound.any = true;
    }
    return bound;
  }

  // The job as the queue sees it: its request and what it has had so far.
  scheduler::JobSnapshot Request(const QueuedJob& q) const {
    scheduler::JobSnapshot js;
    js.request = q.request;
    js.request.submit_time = q.created.value_or(now_s_);
    const DLJobStatus& status = q.job.status;
    const int64_t gpus = q.request.gang.workers * q.request.gang.per_worker.gpus;
    js.history.attained_gpu_seconds = status.attained_gpu_seconds.value_or(0);
    js.history.attained_seconds = gpus > 0 ? js.history.attained_gpu_seconds / gpus : 0;
    js.history.preemptions = status.preemptions.value_or(0);
    js.start_time = q.run_start.value_or(now_s_);
    return js;
  }

  // Whether a run of `workers` workers is one the job can have: its gang's size, or (elastic) a
  // size in its range.
  static bool Fits(const scheduler::JobRequest& r, int64_t workers) {
    if (!r.elastic) return workers == r.gang.workers;
    return workers >= r.elastic->min_workers && workers <= r.elastic->max_workers;
  }

  // Each of the run's `size` workers' node: where it is bound, else where the ledger counts it,
  // else the queue's plan (`planned`, counted on its node here, the ledger not having it yet),
  // else beside a bound worker.
  scheduler::Placement PlacementOf(const QueuedJob& q, const BoundWorkers& bound,
                                   const scheduler::Placement* planned, int64_t size) {
    scheduler::Placement placement;
    for (int64_t i = 0; i < size; ++i) {
      const std::string& pod_key = q.worker_keys[i];
      std::string node = bound.nodes[i];
      if (node.empty()) {
        // The ledger's pod of that name counts for this run unless it is one going (a pod of the
        // run before, deleting: its use is freed above, and the new worker is not counted yet).
        auto counted = ledger_.pods.find(pod_key);
        if (counted != ledger_.pods.end() && !freed_.count(pod_key)) {
          node = counted->second.node;
        } else if (planned) {
          node = planned->worker_nodes[i];
          nodes_.Use(node, q.request.gang.per_worker, +1);
        } else {
          node = *std::find_if(bound.nodes.begin(), bound.nodes.end(),
                               [](const std::string& n) { return !n.empty(); });
        }
      }
      placement.worker_nodes.push_back(node);
    }
    return placement;
  }

  QueueSnapshot snap_;
  NodeIndex nodes_;  // over snap_.nodes
  const LedgerView& ledger_;
  const AdmissionBook& book_;
  const WallTime now_;
  const int64_t now_s_;
  std::set<std::string> named_queues_;
  std::set<std::string> freed_;  // the ledger's pods whose use FreePod took off: they are going
};

}  // namespace

std::optional<WallTime> RunStart(const DLJobStatus& status) {
  if (status.phase != JobPhase::kRunning && status.phase != JobPhase::kScheduled) {
    return std::nullopt;
  }
  const Condition* c = FindCondition(status, PhaseName(status.phase));
  if (!c || c->status != "True") return std::nullopt;
  return ParseRfc3339(c->last_transition_time);
}

QueueSnapshot BuildQueueSnapshot(const std::vector<QueuedJobPtr>& jobs,
                                 const std::function<PodBriefs(const std::string&)>& pods_of,
                                 const std::vector<Json>& queue_objects, const LedgerView& ledger,
                                 const AdmissionBook& book, WallTime now) {
  SnapshotBuilder builder(queue_objects, ledger, book, now);
  for (const QueuedJobPtr& queued : jobs) builder.Add(*queued, pods_of(queued->key));
  return std::move(builder).Take();
}

QueueSnapshot BuildQueueSnapshot(const kube::Objects& jobs,
                                 const std::map<std::string, kube::Objects>& pods_of,
                                 const std::vector<Json>& queue_objects, const LedgerView& ledger,
                                 const AdmissionBook& book, WallTime now) {
  std::vector<QueuedJobPtr> queued;
  for (const kube::ObjectPtr& object : jobs) {
    if (QueuedJobPtr q = QueuedJobOf(*object)) queued.push_back(std::move(q));
  }
  auto pods = [&pods_of](const std::string& key) {
    PodBriefs out;
    auto it = pods_of.find(key);
    if (it == pods_of.end()) return out;
    for (const kube::ObjectPtr& pod : it->second) {
      out.push_back(std::make_shared<const PodBrief>(BriefOf(*pod)));
    }
    return out;
  };
  return BuildQueueSnapshot(queued, pods, queue_objects, ledger, book, now);
}

std::map<std::string, DLQueueStatus> QueueStatuses(const QueueSnapshot& snapshot,
                                                   const scheduler::Decision& decision) {
  std::set<std::string> running(snapshot.running.begin(), snapshot.running.end());
  for (const scheduler::PreemptAction& p : decision.preempt) running.erase(p.job);
  for (const scheduler::StartAction& s : decision.start) running.insert(s.job);

  std::map<std::string, DLQueueStatus> out;
  std::map<std::string, const scheduler::QueueSpec*> specs;
  for (const scheduler::QueueSpec& q : snapshot.queues) {
    specs[q.name] = &q;
    out[q.name] = DLQueueStatus{{}, {}, 0, 0};
  }
  std::map<std::string, std::map<std::string, int64_t>> used;  // queue → quota entry → GPUs
  for (const auto& [key, e] : snapshot.entries) {
    auto spec = specs.find(e.queue);
    if (spec == specs.end()) continue;
    DLQueueStatus& status = out[e.queue];
    if (!running.count(key)) {
      status.pending_jobs = *status.pending_jobs + 1;
      continue;
    }
    status.running_jobs = *status.running_jobs + 1;
    const auto& quotas = spec->second->quotas;
    std::string entry = quotas.count(e.gpu_product) ? e.gpu_product : "";
    used[e.queue][entry] += e.gpus;
  }
  for (auto& [name, status] : out) {
    for (const auto& [product, gpus] : used[name]) {
      status.used.push_back({product, gpus});
      auto q = specs[name]->quotas.find(product);
      int64_t nominal = q == specs[name]->quotas.end() ? 0 : q->second.nominal;
      if (gpus > nominal) status.borrowed.push_back({product, gpus - nominal});
    }
  }
  return out;
}

}  // namespace dljob::controller
