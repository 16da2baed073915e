#include "operator/controller/queue_snapshot.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

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

int64_t UnixSeconds(WallTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

int64_t UnixSecondsOr(const std::string& rfc3339, int64_t fallback) {
  std::optional<WallTime> t = ParseRfc3339(rfc3339);
  return t ? UnixSeconds(*t) : fallback;
}

// The ledger's key for a pod, and the node it is bound to (kube/object_fields.h).
std::string PodKey(const Json& pod) { return kube::ObjectKey(pod); }
std::string NodeOf(const Json& pod) { return kube::NodeNameOf(pod); }

bool IsLive(const Json& pod) {
  std::string phase = pod.value("status", Json::object()).value("phase", "");
  return phase != "Succeeded" && phase != "Failed" && !IsDeleting(pod);
}

bool IsWorker(const Json& pod) { return kube::LabelOf(pod, kRoleLabel) == "worker"; }

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

}  // namespace

std::optional<WallTime> RunStart(const DLJobStatus& status) {
  if (status.phase != JobPhase::kRunning && status.phase != JobPhase::kScheduled) {
    return std::nullopt;
  }
  const Condition* c = FindCondition(status, PhaseName(status.phase));
  if (!c || c->status != "True") return std::nullopt;
  return ParseRfc3339(c->last_transition_time);
}

QueueSnapshot BuildQueueSnapshot(const std::vector<Json>& jobs,
                                 const std::map<std::string, std::vector<Json>>& pods_of,
                                 const std::vector<Json>& queue_objects, const LedgerView& ledger,
                                 const AdmissionBook& book, WallTime now) {
  QueueSnapshot snap;
  snap.nodes = ledger.nodes;
  NodeIndex nodes(snap.nodes);
  snap.queues = DefinedQueues(queue_objects);
  snap.queues_defined = !queue_objects.empty();
  std::set<std::string> named_queues;
  const int64_t now_s = UnixSeconds(now);
  static const std::vector<Json> kNoPods;

  // What a pod counted by the ledger stops using when it goes.
  auto free_pod = [&](const Json& pod) {
    auto it = ledger.pods.find(PodKey(pod));
    if (it != ledger.pods.end()) nodes.Use(it->second.node, it->second.requests, -1);
  };

  for (const Json& object : jobs) {
    if (IsDeleting(object)) continue;
    DecodeResult decoded = DecodeTree(object);
    if (!decoded.errors.empty()) continue;
    DLJob job = std::move(decoded.job);
    ApplyDefaults(job);
    if (IsFinished(job.status.phase) || job.spec.run_policy.suspend.value_or(false)) continue;
    if (!Validate(job).empty()) continue;
    Result<scheduler::Gang> gang = scheduler::GangOf(job);
    if (!gang.ok()) continue;
    const std::string key = job.metadata.namespace_ + "/" + job.metadata.name;
    auto pods_it = pods_of.find(key);
    const std::vector<Json>& pods = pods_it == pods_of.end() ? kNoPods : pods_it->second;
    const int64_t incarnation = JobIncarnation(job.status);

    // The workers of this incarnation bound and live, by index; every other pod is going.
    std::vector<std::string> bound(gang->workers);
    bool any_bound = false;
    for (const Json& pod : pods) {
      if (!IsLive(pod)) {
        if (IsDeleting(pod)) free_pod(pod);
        continue;
      }
      if (IncarnationOf(pod) != incarnation) continue;
      if (!IsWorker(pod) || NodeOf(pod).empty()) continue;
      for (int64_t i = 0; i < gang->workers; ++i) {
        if (PodKey(pod) == job.metadata.namespace_ + "/" + WorkerName(job, i)) {
          bound[i] = NodeOf(pod);
          any_bound = true;
        }
      }
    }

    const Admission admission = book.Get(key);
    const bool suspending =
        admission.verdict == Verdict::kPreempt ||
        (admission.verdict == Verdict::kWaiting && admission.reason == "Preempted" && any_bound);
    if (suspending) {
      for (const Json& pod : pods) {
        if (IsLive(pod)) free_pod(pod);
      }
      snap.leaving.push_back(key);
      continue;
    }

    scheduler::JobSnapshot js;
    js.request.name = key;
    js.request.queue = job.spec.scheduling.queue.value_or(scheduler::kDefaultQueue);
    js.request.priority = job.spec.scheduling.priority.value_or(0);
    js.request.submit_time = UnixSecondsOr(job.metadata.creation_timestamp, now_s);
    js.request.time_limit = job.spec.run_policy.active_deadline_seconds;
    js.request.gang = *gang;
    const int64_t gpus = gang->workers * gang->per_worker.gpus;
    js.history.attained_gpu_seconds = job.status.attained_gpu_seconds.value_or(0);
    js.history.attained_seconds = gpus > 0 ? js.history.attained_gpu_seconds / gpus : 0;
    js.history.preemptions = job.status.preemptions.value_or(0);
    std::optional<WallTime> run_start = RunStart(job.status);
    js.start_time = run_start ? UnixSeconds(*run_start) : now_s;

    const bool planned = admission.verdict == Verdict::kAdmitted && !book.Lapsed(admission, now) &&
                         admission.placement.worker_nodes.size() == bound.size();
    if (any_bound || planned) {
      scheduler::Placement placement;
      for (int64_t i = 0; i < gang->workers; ++i) {
        const std::string pod_key = job.metadata.namespace_ + "/" + WorkerName(job, i);
        std::string node = bound[i];
        if (node.empty()) {
          auto counted = ledger.pods.find(pod_key);
          if (counted != ledger.pods.end()) {
            node = counted->second.node;
          } else if (planned) {
            node = admission.placement.worker_nodes[i];
            nodes.Use(node, gang->per_worker, +1);  // planned; not yet in the ledger
          } else {
            node = *std::find_if(bound.begin(), bound.end(),
                                 [](const std::string& n) { return !n.empty(); });
          }
        }
        placement.worker_nodes.push_back(node);
      }
      js.placement = std::move(placement);
      snap.running.push_back(key);
    }
    snap.entries[key] = {js.request.queue, gang->gpu_model, gpus};
    named_queues.insert(js.request.queue);
    snap.jobs.push_back(std::move(js));
  }
  if (!snap.queues_defined) {
    for (const std::string& q : named_queues) snap.queues.push_back(scheduler::UnlimitedQueue(q));
  }
  return snap;
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
