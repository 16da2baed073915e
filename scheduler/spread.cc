#include "scheduler/spread.h"

#include "scheduler/feasibility.h"
#include "scheduler/policy_util.h"

namespace dljob::scheduler {
namespace {

class SpreadPolicy : public PlacementPolicy {
 public:
  std::string_view Name() const override { return "spread"; }

  Result<Placement> PlaceGang(const Gang& gang, const std::vector<Node>& nodes,
                              bool explain) const override {
    std::vector<Candidate> candidates = Candidates(gang, nodes);
    if (Room(candidates) < gang.workers) return Unplaceable(gang, nodes, explain);
    return PlaceOneByOne(gang, candidates, /*most_free=*/true);
  }
};

}  // namespace

PlacementPolicyPtr NewSpreadPolicy() { return std::make_unique<SpreadPolicy>(); }

}  // namespace dljob::scheduler
