// The elastic half of JobQueue (job_queue.h, "Elastic jobs"): sizing a starting job, shrinking a
// preemption victim, and growing running jobs onto idle GPUs.
#include <algorithm>
#include <map>
#include <tuple>

#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/job_queue_state.h"

namespace dljob::scheduler {

void JobQueue::SetWorkers(Job& job, int64_t workers) {
  job.req.gang.workers = workers;
  job.gpus = GangGpus(job.req.gang);
}

int64_t JobQueue::RunGpuSeconds(const Job& job, int64_t now) const {
  return job.run_gpu_seconds + std::max<int64_t>(0, now - job.size_since) * job.gpus;
}

// Closes the current size's stretch of the run: its GPU-seconds are counted before the size
// changes.
void JobQueue::AccrueSize(Job& job, int64_t now) {
  job.run_gpu_seconds = RunGpuSeconds(job, now);
  job.size_since = std::max(job.size_since, now);
}

// The largest size from max down to min that fits the quota and the policy places (on the
// masked nodes when `masked`); the job is left at that size, or at its min when none fits.
std::optional<Placement> JobQueue::PlaceLargest(Job& job, bool masked) {
  const int64_t w = job.req.gang.per_worker.gpus;
  int64_t top = std::min(job.max_workers, room_.WorkerRoom(job.product_id, w));
  if (masked) top = std::min(top, masked_room_.WorkerRoom(job.product_id, w));
  for (int64_t n = top; n >= job.min_workers; --n) {
    if (w > 0 && quota_.Check(*job.account, n * w)) continue;
    SetWorkers(job, n);
    if (std::optional<Placement> p = TryPlace(job, masked)) return p;
  }
  SetWorkers(job, job.min_workers);
  return std::nullopt;
}

// The victim's placement positions (known nodes only), those to remove first at the front: by
// node, nodes the job could use first, then those with the most room once the victim's workers
// there leave, then by ledger order. A rigid victim's come in placement order.
std::vector<size_t> JobQueue::ShrinkOrder(const Job& victim, const Job& job) const {
  std::vector<std::pair<size_t, size_t>> known;  // (ledger index, position)
  for (size_t p = 0; p < victim.placement.worker_nodes.size(); ++p) {
    if (std::optional<size_t> i = ledger_.Index(victim.placement.worker_nodes[p])) {
      known.push_back({*i, p});
    }
  }
  if (victim.req.gang.workers > victim.min_workers) {
    std::map<size_t, int64_t> held;  // ledger index → the victim's workers there
    for (const auto& [node, p] : known) ++held[node];
    auto key = [&](size_t node) {
      const int64_t room =
          FreeGpus(ledger_.nodes()[node]) + held[node] * victim.req.gang.per_worker.gpus;
      return std::make_tuple(!ledger_.Eligible(node, job.product_id), -room, node);
    };
    std::stable_sort(known.begin(), known.end(),
                     [&](const auto& a, const auto& b) { return key(a.first) < key(b.first); });
  }
  std::vector<size_t> out;
  for (const auto& [node, p] : known) out.push_back(p);
  return out;
}

void JobQueue::Shrink(Job& v, std::vector<size_t> positions, const Job& job, Pass& pass) {
  std::sort(positions.begin(), positions.end());
  const int64_t from = v.req.gang.workers;
  std::vector<size_t> removed;
  Placement kept;
  for (size_t p = 0, k = 0; p < v.placement.worker_nodes.size(); ++p) {
    if (k < positions.size() && positions[k] == p) {
      removed.push_back(*ledger_.Index(v.placement.worker_nodes[p]));
      ++k;
    } else {
      kept.worker_nodes.push_back(v.placement.worker_nodes[p]);
    }
  }
  AccrueSize(v, pass.now);
  room_.Before(removed);
  ledger_.Apply(v.req.gang, removed, -1);
  room_.After(removed);
  Freed(removed, pass.now);
  const auto to = from - static_cast<int64_t>(removed.size());
  if (v.account) quota_.Release(*v.account, (from - to) * v.req.gang.per_worker.gpus);
  SetWorkers(v, to);
  v.placement = std::move(kept);
  v.nodes = ledger_.Indices(v.placement);
  pass.decision.resize.push_back({v.req.name, v.placement, from, to, job.req.name,
                                  "shrunk " + std::to_string(from) + " → " + std::to_string(to) +
                                      " workers for " + PreemptWhy(v, job, pass.now)});
}

std::map<std::string, int64_t> JobQueue::idle_since() const {
  std::map<std::string, int64_t> out;
  const std::vector<Node>& nodes = ledger_.nodes();
  for (size_t i = 0; i < nodes.size() && i < free_since_.size(); ++i) {
    if (free_since_[i] && FreeGpus(nodes[i]) > 0) out[nodes[i].name] = *free_since_[i];
  }
  return out;
}

void JobQueue::SetIdleSince(const std::map<std::string, int64_t>& idle_since) {
  const std::vector<Node>& nodes = ledger_.nodes();
  for (size_t i = 0; i < nodes.size() && i < free_since_.size(); ++i) {
    if (auto it = idle_since.find(nodes[i].name); it != idle_since.end()) {
      free_since_[i] = it->second;
    }
  }
}

// GPUs left `nodes` at `now`: what is free there has been free since now.
void JobQueue::Freed(const std::vector<size_t>& nodes, int64_t now) {
  for (size_t i : nodes) {
    if (i < free_since_.size()) free_since_[i] = now;
  }
}

// The workers of `job` that fit the idle room of scratch_ (Grow's view), counting GPUs only.
int64_t JobQueue::GrowRoom(const Job& job) const {
  const int64_t w = job.req.gang.per_worker.gpus;
  if (w <= 0) return job.max_workers;
  int64_t room = 0;
  for (size_t i = 0; i < scratch_.size(); ++i) {
    if (ledger_.Eligible(i, job.product_id)) room += FreeGpus(scratch_[i]) / w;
  }
  return room;
}

void JobQueue::Grow(Pass& pass) {
  std::vector<Job*> growable;
  for (Job* r : running_) {
    if (r->account && r->req.gang.workers < r->max_workers) growable.push_back(r);
  }
  if (growable.empty()) return;
  auto order = [&](const Job* j) {
    return std::make_tuple(-Priority(*j), j->start, std::string_view(j->req.name));
  };
  std::sort(growable.begin(), growable.end(),
            [&](const Job* a, const Job* b) { return order(a) < order(b); });
  // The products some waiting job could run on (kAnyProduct: one could run anywhere).
  std::optional<std::set<int>> wanted;
  auto wants = [&](int product_id) {
    if (!wanted) {
      wanted.emplace();
      for (const PendingKey& k : pending_) {
        if (k.job->account && !k.job->never_fits) wanted->insert(k.job->product_id);
      }
    }
    if (wanted->empty()) return false;
    return product_id == kAnyProduct || wanted->count(kAnyProduct) || wanted->count(product_id);
  };
  // The view a grow is placed on: each node's free GPUs where they have been idle for grow_after,
  // none where not yet (and when that will be, for the next pass).
  ledger_.CopyUsedTo(scratch_);
  for (size_t i = 0; i < scratch_.size(); ++i) {
    if (FreeGpus(scratch_[i]) <= 0) continue;
    if (!free_since_[i]) free_since_[i] = pass.now;
    const int64_t at = *free_since_[i] + options_.grow_after;
    if (pass.now >= at) continue;
    scratch_[i].used = scratch_[i].allocatable;
    if (!pass.grow_at || at < *pass.grow_at) pass.grow_at = at;
  }
  for (Job* g : growable) {
    if (!wants(g->product_id)) TryGrow(*g, pass);
  }
}

// Adds as many workers as fit the quota and the idle room, up to max, all at once.
bool JobQueue::TryGrow(Job& job, Pass& pass) {
  const int64_t w = job.req.gang.per_worker.gpus;
  const int64_t from = job.req.gang.workers;
  const int64_t top = std::min(job.max_workers - from, GrowRoom(job));
  for (int64_t n = top; n >= 1; --n) {
    if (w > 0 && quota_.Check(*job.account, n * w)) continue;
    Gang extra = job.req.gang;
    extra.workers = n;
    std::optional<Placement> p = policy_.TryPlace(extra, scratch_);
    if (!p) continue;
    const std::vector<size_t> added = ledger_.Indices(*p);
    int64_t idle_since = 0;
    for (size_t i : added) idle_since = std::max(idle_since, free_since_[i].value_or(0));
    AccrueSize(job, pass.now);
    room_.Before(added);
    ledger_.Apply(job.req.gang, added, +1);
    room_.After(added);
    ledger_.Apply(job.req.gang, added, +1, scratch_);
    quota_.Charge(*job.account, n * w);
    SetWorkers(job, from + n);
    for (std::string& node : p->worker_nodes) job.placement.worker_nodes.push_back(std::move(node));
    job.nodes = ledger_.Indices(job.placement);
    pass.decision.resize.push_back({job.req.name, job.placement, from, from + n, "",
                                    "grew " + std::to_string(from) + " → " +
                                        std::to_string(from + n) + " workers onto GPUs idle for " +
                                        std::to_string(pass.now - idle_since) + " s"});
    return true;
  }
  return false;
}

}  // namespace dljob::scheduler
