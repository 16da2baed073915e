#include "scheduler/best_fit.h"

#include "scheduler/feasibility.h"
#include "scheduler/policy_util.h"

namespace dljob::scheduler {
namespace {

class BestFitPolicy : public PlacementPolicy {
 public:
  std::string_view Name() const override { return "best-fit"; }

  Result<Placement> PlaceGang(const Gang& gang, const std::vector<Node>& nodes,
                              bool explain) const override {
    std::vector<Candidate> candidates = Candidates(gang, nodes);
    if (Room(candidates) < gang.workers) return Unplaceable(gang, nodes, explain);
    return PlaceOneByOne(gang, candidates, /*most_free=*/false);
  }
};

}  // namespace

PlacementPolicyPtr NewBestFitPolicy() { return std::make_unique<BestFitPolicy>(); }

}  // namespace dljob::scheduler
