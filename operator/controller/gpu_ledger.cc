#include "operator/controller/gpu_ledger.h"

#include "operator/controller/store.h"

namespace dljob::controller {
namespace {

constexpr char kGpu[] = "nvidia.com/gpu";

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Str(const Json& j, const char* key) {
  const Json& v = Field(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// A whole-GPU quantity: 8 or "8" (GPUs are never fractional).
int64_t Gpus(const Json& resources) {
  const Json& v = Field(resources, kGpu);
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_string()) return 0;
  try {
    return std::stoll(v.get<std::string>());
  } catch (const std::exception&) {
    return 0;
  }
}

bool NodeReady(const Json& node) {
  const Json& conditions = Field(Field(node, "status"), "conditions");
  if (!conditions.is_array()) return true;  // a node that reports nothing yet is taken at its word
  for (const Json& c : conditions) {
    if (Str(c, "type") == "Ready") return Str(c, "status") == "True";
  }
  return conditions.empty();
}

bool IsTerminal(const Json& pod) {
  std::string phase = Str(Field(pod, "status"), "phase");
  return phase == "Succeeded" || phase == "Failed";
}

bool SameTaints(const std::vector<scheduler::Taint>& a, const std::vector<scheduler::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect)
      return false;
  }
  return true;
}

}  // namespace

scheduler::NodeState NodeStateOf(const Json& node) {
  const Json& meta = Field(node, "metadata");
  scheduler::NodeState s;
  s.name = Str(meta, "name");
  s.allocatable_gpus = Gpus(Field(Field(node, "status"), "allocatable"));
  const Json& labels = Field(meta, "labels");
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (v.is_string()) s.labels[k] = v.get<std::string>();
    }
  }
  const Json& spec = Field(node, "spec");
  const Json& taints = Field(spec, "taints");
  if (taints.is_array()) {
    for (const Json& t : taints)
      s.taints.push_back({Str(t, "key"), Str(t, "value"), Str(t, "effect")});
  }
  const Json& cordoned = Field(spec, "unschedulable");
  s.schedulable = !(cordoned.is_boolean() && cordoned.get<bool>()) && NodeReady(node);
  return s;
}

int64_t PodGpus(const Json& pod) {
  int64_t total = 0;
  const Json& containers = Field(Field(pod, "spec"), "containers");
  if (!containers.is_array()) return 0;
  for (const Json& c : containers) {
    const Json& res = Field(c, "resources");
    int64_t limit = Gpus(Field(res, "limits"));
    total += limit > 0 ? limit : Gpus(Field(res, "requests"));
  }
  return total;
}

Json LedgerPodView(const Json& pod) {
  Json out = Json::object();
  const Json& meta = Field(pod, "metadata");
  Json& m = out["metadata"] = Json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion"}) {
    if (const Json& v = Field(meta, key); v.is_string()) m[key] = v;
  }
  const Json& spec = Field(pod, "spec");
  if (const Json& node = Field(spec, "nodeName"); node.is_string()) out["spec"]["nodeName"] = node;
  if (const Json& containers = Field(spec, "containers"); containers.is_array()) {
    Json& cs = out["spec"]["containers"] = Json::array();
    for (const Json& c : containers) {
      Json slim = Json::object();
      if (const Json& r = Field(c, "resources"); r.is_object()) slim["resources"] = r;
      cs.push_back(std::move(slim));
    }
  }
  if (const Json& phase = Field(Field(pod, "status"), "phase"); phase.is_string()) {
    out["status"]["phase"] = phase;
  }
  return out;
}

GpuLedger::GpuLedger(const Clock& clock, Duration assume_ttl)
    : clock_(clock), assume_ttl_(assume_ttl) {}

void GpuLedger::UseLocked(const std::string& node, int64_t delta) {
  if (delta == 0) return;
  auto it = used_.try_emplace(node, 0).first;
  it->second += delta;
  if (it->second == 0) used_.erase(it);
}

void GpuLedger::DropAssumptionLocked(std::map<std::string, Assumption>::iterator it) {
  UseLocked(it->second.use.node, -it->second.use.gpus);
  assumed_.erase(it);
}

void GpuLedger::ExpireLocked(WallTime now) {
  for (auto it = assumed_.begin(); it != assumed_.end();) {
    auto next = std::next(it);
    if (it->second.expires <= now) DropAssumptionLocked(it);
    it = next;
  }
}

bool GpuLedger::UpsertNode(const Json& node) {
  scheduler::NodeState s = NodeStateOf(node);
  if (s.name.empty()) return false;
  std::lock_guard lock(mu_);
  auto [it, added] = nodes_.try_emplace(s.name, s);
  if (added) return true;
  const scheduler::NodeState& old = it->second;
  bool more_room = s.allocatable_gpus > old.allocatable_gpus ||
                   (s.schedulable && !old.schedulable) || s.labels != old.labels ||
                   !SameTaints(s.taints, old.taints);
  it->second = std::move(s);
  return more_room;
}

bool GpuLedger::RemoveNode(const Json& node) {
  std::lock_guard lock(mu_);
  nodes_.erase(Str(Field(node, "metadata"), "name"));
  return false;
}

bool GpuLedger::UpsertPod(const Json& pod) {
  const Json& meta = Field(pod, "metadata");
  const std::string key = ObjectKey(Str(meta, "namespace"), Str(meta, "name"));
  const std::string uid = Str(meta, "uid");
  const std::string node = Str(Field(pod, "spec"), "nodeName");
  if (node.empty()) return false;  // not bound yet: uses nothing
  std::lock_guard lock(mu_);
  // The informer shows the pod bound: the observation replaces what was assumed for it.
  if (auto a = assumed_.find(key);
      a != assumed_.end() &&
      (a->second.use.uid.empty() || uid.empty() || a->second.use.uid == uid)) {
    DropAssumptionLocked(a);
  }
  int64_t before = 0;
  if (auto o = observed_.find(key); o != observed_.end()) {
    before = o->second.gpus;
    UseLocked(o->second.node, -o->second.gpus);
    observed_.erase(o);
  }
  if (IsTerminal(pod)) return before > 0;  // finished pods hold no GPUs
  PodUse use{uid, node, PodGpus(pod)};
  UseLocked(node, use.gpus);
  observed_.emplace(key, std::move(use));
  return false;
}

bool GpuLedger::RemovePod(const Json& pod) {
  const Json& meta = Field(pod, "metadata");
  const std::string key = ObjectKey(Str(meta, "namespace"), Str(meta, "name"));
  const std::string uid = Str(meta, "uid");
  std::lock_guard lock(mu_);
  auto o = observed_.find(key);
  // A pod of the same name created since is not the one that went.
  if (o == observed_.end() || (!uid.empty() && !o->second.uid.empty() && o->second.uid != uid)) {
    return false;
  }
  int64_t freed = o->second.gpus;
  UseLocked(o->second.node, -freed);
  observed_.erase(o);
  return freed > 0;
}

Result<std::vector<Seat>> GpuLedger::PlaceAndAssume(const std::string& job_key, const DLJob& job,
                                                    const std::vector<PodClaim>& pods) {
  std::lock_guard lock(mu_);
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
  const int64_t per_worker = job.spec.gpus_per_worker.value_or(1);
  DLJob rest = job;  // place only what is left (all of it, unless an earlier bind was cut short)
  rest.spec.gpus = static_cast<int64_t>(todo.size()) * per_worker;
  std::vector<scheduler::NodeState> view;
  view.reserve(nodes_.size());
  for (const auto& [name, state] : nodes_) {
    view.push_back(state);
    auto u = used_.find(name);
    view.back().used_gpus = u == used_.end() ? 0 : u->second;
  }
  Result<scheduler::GangPlacement> placement = scheduler::PlaceGang(rest, view);
  if (!placement.ok()) {
    waiting_.insert(job_key);
    return placement.status();
  }
  waiting_.erase(job_key);
  for (size_t j = 0; j < todo.size(); ++j) {
    const PodClaim& p = pods[todo[j]];
    const std::string& node = placement->worker_nodes[j];
    if (auto stale = assumed_.find(p.key); stale != assumed_.end()) DropAssumptionLocked(stale);
    assumed_.emplace(p.key, Assumption{PodUse{p.uid, node, per_worker}, now + assume_ttl_});
    UseLocked(node, per_worker);
    seats[todo[j]] = Seat{node, true};
  }
  return seats;
}

void GpuLedger::Forget(const std::vector<PodClaim>& pods) {
  std::lock_guard lock(mu_);
  for (const PodClaim& p : pods) {
    auto a = assumed_.find(p.key);
    if (a != assumed_.end() && (p.uid.empty() || a->second.use.uid == p.uid))
      DropAssumptionLocked(a);
  }
}

std::vector<std::string> GpuLedger::Waiting() const {
  std::lock_guard lock(mu_);
  return {waiting_.begin(), waiting_.end()};
}

void GpuLedger::StopWaiting(const std::string& job_key) {
  std::lock_guard lock(mu_);
  waiting_.erase(job_key);
}

std::vector<scheduler::NodeState> GpuLedger::Nodes() const {
  std::lock_guard lock(mu_);
  std::vector<scheduler::NodeState> out;
  const WallTime now = clock_.Now();
  std::map<std::string, int64_t> expired;  // not yet dropped (this is a const view)
  for (const auto& [key, a] : assumed_) {
    if (a.expires <= now) expired[a.use.node] += a.use.gpus;
  }
  for (const auto& [name, state] : nodes_) {
    out.push_back(state);
    auto u = used_.find(name);
    out.back().used_gpus = (u == used_.end() ? 0 : u->second) - expired[name];
  }
  return out;
}

size_t GpuLedger::Assumed() const {
  std::lock_guard lock(mu_);
  const WallTime now = clock_.Now();
  size_t n = 0;
  for (const auto& [key, a] : assumed_) n += a.expires > now ? 1 : 0;
  return n;
}

size_t GpuLedger::Observed() const {
  std::lock_guard lock(mu_);
  return observed_.size();
}

}  // namespace dljob::controller
