#include "scheduler/first_fit.h"

#include <algorithm>
#include <tuple>

#include "scheduler/feasibility.h"
#include "scheduler/policy_util.h"

namespace dljob::scheduler {
namespace {

class FirstFitPolicy : public PlacementPolicy {
 public:
  std::string_view Name() const override { return "first-fit"; }

  Result<Placement> PlaceGang(const Gang& gang, const std::vector<Node>& nodes,
                              bool explain) const override {
    std::vector<Candidate> candidates = Candidates(gang, nodes);  // by name
    if (Room(candidates) < gang.workers) return Unplaceable(gang, nodes, explain);
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

}  // namespace dljob::scheduler
