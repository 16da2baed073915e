// PlacementPolicy: where every worker of a gang goes, or why none can.
//
// A policy is a pure function of a gang and the cluster (cluster.h): it returns a node for every
// worker, or places nothing and says why in a sentence a person can act on. It never over-commits
// any resource a node accounts for (GPUs, CPU, memory, pods) and never places part of a gang.
// For the same input it returns the same output (ties broken by node name). Policies are chosen
// by name (MakePlacementPolicy), as `dljob-operator --placement-policy` and `dljob-sim --policy`
// name them:
//   first-fit  the gang on the tightest single node that holds it, else the roomiest nodes first
//   spread     kube-scheduler-like: each worker on the least-allocated feasible node
//   best-fit   each worker on the feasible node with the least room left after it
//   dljob      fewest nodes; then one NVLink clique / rack / zone (scheduling.topology Pack, or
//              across domains for Spread); then best fit, keeping whole nodes free for big
//              gangs; then nodes that already cache the gang's datasets
// Implementations are immutable after construction; Place may be called from any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "scheduler/cluster.h"

namespace dljob::scheduler {

struct PlacementOptions {
  std::string rack_label = kDefaultRackLabel;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual std::string_view Name() const = 0;
  // A node for every worker, or kFailedPrecondition with the reason the gang does not fit, e.g.
  // "needs 2 workers × 8 GPUs; 1 of 3 nodes match nodeSelector and tolerations, with room for 1".
  Result<Placement> Place(const Gang& gang, const std::vector<Node>& nodes) const {
    return PlaceGang(gang, nodes, /*explain=*/true);
  }
  // The same placement as Place, or nullopt when the gang does not fit, without the work of
  // saying why (a count of every node's reasons): for callers that drop the reason, as the queue
  // does trying each waiting job on each pass.
  std::optional<Placement> TryPlace(const Gang& gang, const std::vector<Node>& nodes) const;

 protected:
  // Place; with `explain` false, a failure's status need not say why (feasibility.h's
  // Unplaceable).
  virtual Result<Placement> PlaceGang(const Gang& gang, const std::vector<Node>& nodes,
                                      bool explain) const = 0;
};
using PlacementPolicyPtr = std::unique_ptr<PlacementPolicy>;

// The policy of that name; kInvalidArgument naming the known ones for an unknown name.
Result<PlacementPolicyPtr> MakePlacementPolicy(std::string_view name,
                                               const PlacementOptions& options = {});
// "first-fit", "spread", "best-fit", "dljob".
std::vector<std::string_view> PlacementPolicyNames();

}  // namespace dljob::scheduler
