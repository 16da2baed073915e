#include "operator/scheduler/first_fit.h"

#include <algorithm>

namespace dljob::scheduler {
namespace {

bool Tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.key.empty()) return t.operator_ == "Exists";  // an empty key with Exists tolerates all
  if (t.key != taint.key) return false;
  return t.operator_ == "Exists" || t.value == taint.value;
}

bool MatchesSelector(const std::map<std::string, std::string>& selector,
                     const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

bool ToleratesTaints(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints) {
  for (const Taint& taint : taints) {
    if (taint.effect == "PreferNoSchedule") continue;
    bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!tolerated) return false;
  }
  return true;
}

Result<GangPlacement> PlaceGang(const DLJob& job, const std::vector<NodeState>& nodes) {
  const int64_t per_worker = job.spec.gpus_per_worker.value_or(1);
  const int64_t workers = per_worker > 0 ? job.spec.gpus.value_or(0) / per_worker : 0;
  std::vector<const NodeState*> eligible;
  for (const NodeState& n : nodes) {
    if (n.schedulable && MatchesSelector(job.spec.scheduling.node_selector, n.labels) &&
        ToleratesTaints(job.spec.scheduling.tolerations, n.taints)) {
      eligible.push_back(&n);
    }
  }
  auto free_slots = [per_worker](const NodeState* n) {
    return per_worker > 0 ? std::max<int64_t>(0, n->allocatable_gpus - n->used_gpus) / per_worker
                          : 0;
  };
  GangPlacement placement;
  int64_t room = 0;
  const NodeState* best_single = nullptr;  // the tightest node that holds the whole gang
  for (const NodeState* n : eligible) {
    room += free_slots(n);
    if (free_slots(n) >= workers && (!best_single || free_slots(n) < free_slots(best_single))) {
      best_single = n;
    }
  }
  if (best_single) {
    placement.worker_nodes.assign(static_cast<size_t>(workers), best_single->name);
    return placement;
  }
  // Otherwise the roomiest nodes first: the fewest nodes for the gang.
  std::stable_sort(eligible.begin(), eligible.end(), [&](const NodeState* a, const NodeState* b) {
    return free_slots(a) > free_slots(b);
  });
  for (const NodeState* n : eligible) {
    for (int64_t i = 0;
         i < free_slots(n) && static_cast<int64_t>(placement.worker_nodes.size()) < workers; ++i) {
      placement.worker_nodes.push_back(n->name);
    }
  }
  if (static_cast<int64_t>(placement.worker_nodes.size()) == workers) return placement;
  return Status::FailedPrecondition(
      "needs " + std::to_string(workers) + (workers == 1 ? " worker" : " workers") + " × " +
      std::to_string(per_worker) + " GPUs; " + std::to_string(eligible.size()) + " of " +
      std::to_string(nodes.size()) + " nodes match nodeSelector and tolerations, with room for " +
      std::to_string(room));
}

}  // namespace dljob::scheduler
