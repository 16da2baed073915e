#include "operator/scheduler/first_fit.h"

#include <algorithm>
#include <tuple>

#include "operator/scheduler/gang.h"
#include "operator/scheduler/policy_util.h"

namespace dljob::scheduler {
namespace {

class FirstFitPolicy : public PlacementPolicy {
 public:
  std::string_view Name() const override { return "first-fit"; }

  Result<Placement> Place(const Gang& gang, const std::vector<Node>& nodes) const override {
    std::vector<Candidate> candidates = Candidates(gang, nodes);  // by name
    if (Room(candidates) < gang.workers) return Unplaceable(gang, nodes);
    auto tighter = [](const Candidate& a, const Candidate& b) {
      Resources fa = Free(*a.node), fb = Free(*b.node);
      return std::tie(fa.gpus, fa.cpu_milli, fa.memory_mib) <
             std::tie(fb.gpus, fb.cpu_milli, fb.memory_mib);
    };
    const Candidate* single = nullptr;
    for (const Candidate& c : candidates) {
      if (c.slots >= gang.workers && (!single || tighter(c, *single))) single = &c;
    }
    if (single) return Expand({{single->node, gang.workers}});
    // The most room first: the fewest nodes. Stable, so equal room goes by name.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.slots > b.slots; });
    std::vector<Take> takes;
    int64_t left = gang.workers;
    for (const Candidate& c : candidates) {
      if (left == 0) break;
      takes.push_back({c.node, std::min(left, c.slots)});
      left -= takes.back().workers;
    }
    return Expand(takes);
  }
};

}  // namespace

PlacementPolicyPtr NewFirstFitPolicy() { return std::make_unique<FirstFitPolicy>(); }

Result<GangPlacement> PlaceGang(const DLJob& job, const std::vector<NodeState>& nodes) {
  Result<Gang> gang = GangOf(job);
  if (!gang.ok()) return gang.status();
  gang->per_worker = {gang->per_worker.gpus, 0, 0, 1};  // GPUs alone, as before
  std::vector<Node> view;
  view.reserve(nodes.size());
  for (const NodeState& s : nodes) {
    Node n;
    n.name = s.name;
    n.allocatable.gpus = s.allocatable_gpus;
    n.used.gpus = s.used_gpus;
    n.labels = s.labels;
    n.taints = s.taints;
    n.schedulable = s.schedulable;
    view.push_back(std::move(n));
  }
  Result<Placement> p = FirstFitPolicy().Place(*gang, view);
  if (!p.ok()) return p.status();
  return GangPlacement{std::move(p->worker_nodes)};
}

}  // namespace dljob::scheduler
