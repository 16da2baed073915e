#include "operator/controller/gpu_ledger.h"

#include "base/json_fields.h"
#include "kube/object_fields.h"
#include "kube/runtime/store.h"
#include "scheduler/dljob_policy.h"
#include "scheduler/gang.h"

namespace dljob::controller {

using Json = nlohmann::json;
using kube::ObjectKey;

namespace {

bool IsTerminal(const Json& pod) {
  std::string phase = StringAt(FieldOf(pod, "status"), "phase");
  return phase == "Succeeded" || phase == "Failed";
}

bool MoreOfAny(const scheduler::Resources& now, const scheduler::Resources& before) {
  return now.gpus > before.gpus || now.cpu_milli > before.cpu_milli ||
         now.memory_mib > before.memory_mib || now.pods > before.pods;
}

void Accumulate(scheduler::Resources& to, const scheduler::Resources& r, int sign) {
  to.gpus += sign * r.gpus;
  to.cpu_milli += sign * r.cpu_milli;
  to.memory_mib += sign * r.memory_mib;
  to.pods += sign * r.pods;
}

}  // namespace

GpuLedger::GpuLedger(const Clock& clock, const scheduler::PlacementPolicy& policy,
                     kube::Duration assume_ttl)
    : clock_(clock), assume_ttl_(assume_ttl), policy_(policy) {}

GpuLedger::GpuLedger(const Clock& clock, kube::Duration assume_ttl)
    : clock_(clock),
      assume_ttl_(assume_ttl),
      owned_policy_(scheduler::NewDljobPolicy({})),
      policy_(*owned_policy_) {}

void GpuLedger::UseLocked(const PodUse& use, int sign) {
  if (use.requests == scheduler::Resources{}) return;
  auto it = used_.try_emplace(use.node).first;
  Accumulate(it->second, use.requests, sign);
  if (it->second == scheduler::Resources{}) used_.erase(it);
  if (auto at = view_at_.find(use.node); !view_stale_ && at != view_at_.end()) {
    Accumulate(view_[at->second].used, use.requests, sign);
  }
}

const std::vector<scheduler::Node>& GpuLedger::PlacementViewLocked() {
  if (view_stale_) {
    view_ = NodesLocked(used_);
    view_at_.clear();
    for (size_t i = 0; i < view_.size(); ++i) view_at_[view_[i].name] = i;
    view_stale_ = false;
  }
  return view_;
}

void GpuLedger::DropAssumptionLocked(std::map<std::string, Assumption>::iterator it) {
  UseLocked(it->second.use, -1);
  assumed_.erase(it);
}

void GpuLedger::ExpireLocked(WallTime now) {
  while (!expiries_.empty() && expiries_.front().first <= now) {
    const auto& [expires, key] = expiries_.front();
    if (auto it = assumed_.find(key); it != assumed_.end() && it->second.expires == expires) {
      DropAssumptionLocked(it);
    }
    expiries_.pop_front();
  }
}

bool GpuLedger::GpuNodeLocked(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.allocatable.gpus > 0;
}

bool GpuLedger::UpsertNode(const Json& node) {
  scheduler::Node n = SchedulerNodeOf(node);
  if (n.name.empty()) return false;
  MutexLock lock(mu_);
  auto [it, added] = nodes_.try_emplace(n.name, n);
  if (added) {
    view_stale_ = true;
    return true;
  }
  const scheduler::Node& old = it->second;
  if (n == old) return false;
  bool more_room = MoreOfAny(n.allocatable, old.allocatable) ||
                   (n.schedulable && !old.schedulable) || n.labels != old.labels ||
                   n.taints != old.taints;
  if (auto at = view_at_.find(n.name); !view_stale_ && at != view_at_.end()) {
    scheduler::Node& seen = view_[at->second];
    n.used = seen.used;
    seen = n;
    n.used = {};
  }
  it->second = std::move(n);
  return more_room;
}

bool GpuLedger::RemoveNode(const Json& node) {
  MutexLock lock(mu_);
  if (nodes_.erase(kube::NameOf(node)) > 0) view_stale_ = true;
  return false;
}

bool GpuLedger::UpsertPod(const Json& pod) {
  const std::string key = kube::ObjectKey(pod);
  const std::string uid = kube::UidOf(pod);
  const std::string node = kube::NodeNameOf(pod);
  if (node.empty()) return false;  // not bound yet: uses nothing
  MutexLock lock(mu_);
  // The informer shows the pod bound: the observation replaces what was assumed for it.
  if (auto a = assumed_.find(key);
      a != assumed_.end() &&
      (a->second.use.uid.empty() || uid.empty() || a->second.use.uid == uid)) {
    DropAssumptionLocked(a);
  }
  bool freed = false;
  if (auto o = observed_.find(key); o != observed_.end()) {
    freed = GpuNodeLocked(o->second.node);
    UseLocked(o->second, -1);
    observed_.erase(o);
  }
  if (IsTerminal(pod)) return freed;  // finished pods hold nothing
  PodUse use{uid, node, PodRequests(pod)};
  UseLocked(use, +1);
  observed_.emplace(key, std::move(use));
  return false;
}

bool GpuLedger::RemovePod(const Json& pod) {
  const std::string key = kube::ObjectKey(pod);
  const std::string uid = kube::UidOf(pod);
  MutexLock lock(mu_);
  auto o = observed_.find(key);
  // A pod of the same name created since is not the one that went.
  if (o == observed_.end() || (!uid.empty() && !o->second.uid.empty() && o->second.uid != uid)) {
    return false;
  }
  const bool freed = GpuNodeLocked(o->second.node);
  UseLocked(o->second, -1);
  observed_.erase(o);
  return freed;
}

Status GpuLedger::FitsWithout(const DLJob& job, const std::vector<std::string>& pod_keys) const {
  Result<scheduler::Gang> gang = scheduler::GangOf(job);
  if (!gang.ok()) return gang.status();
  MutexLock lock(mu_);
  std::map<std::string, scheduler::Resources> used = used_;
  const WallTime now = clock_.Now();
  for (const std::string& key : pod_keys) {
    const PodUse* use = nullptr;
    if (auto o = observed_.find(key); o != observed_.end()) {
      use = &o->second;
    } else if (auto a = assumed_.find(key); a != assumed_.end() && a->second.expires > now) {
      use = &a->second.use;
    }
    if (use) Accumulate(used[use->node], use->requests, -1);
  }
  for (const auto& [key, a] : assumed_) {  // expired, not yet dropped (this is const)
    if (a.expires <= now) Accumulate(used[a.use.node], a.use.requests, -1);
  }
  Result<scheduler::Placement> placement = policy_.Place(*gang, NodesLocked(used));
  return placement.ok() ? Status::Ok() : placement.status();
}

std::vector<scheduler::Node> GpuLedger::NodesLocked(
    const std::map<std::string, scheduler::Resources>& used) const {
  std::vector<scheduler::Node> view;
  view.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) {
    view.push_back(node);
    if (auto u = used.find(name); u != used.end()) view.back().used = u->second;
  }
  return view;
}

Result<std::vector<Seat>> GpuLedger::PlaceAndAssume(const std::string& job_key, const DLJob& job,
                                                    const std::vector<PodClaim>& pods) {
  Result<scheduler::Gang> gang = scheduler::GangOf(job);
  if (!gang.ok()) return gang.status();
  MutexLock lock(mu_);
  const WallTime now = clock_.Now();
  ExpireLocked(now);
  std::vector<Seat> seats(pods.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodClaim& p = pods[i];
    auto matches = [&p](const PodUse& u) {
      return p.uid.empty() || u.uid.empty() || u.uid == p.uid;
    };
    if (auto o = observed_.find(p.key); o != observed_.end() && matches(o->second)) {
      seats[i].node = o->second.node;
    } else if (auto a = assumed_.find(p.key); a != assumed_.end() && matches(a->second.use)) {
      seats[i].node = a->second.use.node;
    } else {
      todo.push_back(i);
    }
  }
  if (todo.empty()) {
    waiting_.erase(job_key);
    return seats;
  }
  // Place only what is left (all of it, unless an earlier bind was cut short).
  gang->workers = static_cast<int64_t>(todo.size());
  Result<scheduler::Placement> placement = policy_.Place(*gang, PlacementViewLocked());
  if (!placement.ok()) {
    waiting_.insert(job_key);
    return placement.status();
  }
  waiting_.erase(job_key);
  for (size_t j = 0; j < todo.size(); ++j) {
    const PodClaim& p = pods[todo[j]];
    const std::string& node = placement->worker_nodes[j];
    if (auto stale = assumed_.find(p.key); stale != assumed_.end()) DropAssumptionLocked(stale);
    Assumption a{PodUse{p.uid, node, gang->per_worker}, now + assume_ttl_};
    UseLocked(a.use, +1);
    expiries_.emplace_back(a.expires, p.key);
    assumed_.emplace(p.key, std::move(a));
    seats[todo[j]] = Seat{node, true};
  }
  return seats;
}

void GpuLedger::Forget(const std::vector<PodClaim>& pods) {
  MutexLock lock(mu_);
  for (const PodClaim& p : pods) {
    auto a = assumed_.find(p.key);
    if (a != assumed_.end() && (p.uid.empty() || a->second.use.uid == p.uid))
      DropAssumptionLocked(a);
  }
}

std::vector<std::string> GpuLedger::Waiting() const {
  MutexLock lock(mu_);
  return {waiting_.begin(), waiting_.end()};
}

void GpuLedger::StopWaiting(const std::string& job_key) {
  MutexLock lock(mu_);
  waiting_.erase(job_key);
}

std::vector<scheduler::Node> GpuLedger::Nodes() const { return View().nodes; }

LedgerView GpuLedger::View() const {
  MutexLock lock(mu_);
  const WallTime now = clock_.Now();
  LedgerView view;
  std::map<std::string, scheduler::Resources> expired;  // not yet dropped (this is a const view)
  for (const auto& [key, a] : assumed_) {
    if (a.expires <= now) {
      Accumulate(expired[a.use.node], a.use.requests, +1);
    } else {
      view.pods[key] = {a.use.node, a.use.requests};
    }
  }
  for (const auto& [key, use] : observed_) view.pods[key] = {use.node, use.requests};
  for (const auto& [name, node] : nodes_) {
    view.nodes.push_back(node);
    if (auto u = used_.find(name); u != used_.end()) view.nodes.back().used = u->second;
    if (auto e = expired.find(name); e != expired.end()) {
      Accumulate(view.nodes.back().used, e->second, -1);
    }
  }
  return view;
}

size_t GpuLedger::Assumed() const {
  MutexLock lock(mu_);
  const WallTime now = clock_.Now();
  size_t n = 0;
  for (const auto& [key, a] : assumed_) n += a.expires > now ? 1 : 0;
  return n;
}

size_t GpuLedger::Observed() const {
  MutexLock lock(mu_);
  return observed_.size();
}

}  // namespace dljob::controller
