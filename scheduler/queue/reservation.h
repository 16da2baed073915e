// The head job's reservation (EASY backfill): the earliest time, going by the running jobs' time
// limits, at which the head's gang will fit, where it will go then, and what is left over on
// each node at that time, which a backfilled job that outlives the reservation may still use.
//
// The plan walks the running jobs in order of their end (start + time limit), taking each off a
// scratch copy of the nodes until the placement policy places the head. Jobs without a time
// limit count as never ending; when the head fits only once they end too, the plan has no time
// and reserves the placement it would get on the cluster with every running job gone. When it
// would not fit even then, it never fits while the cluster stays as it is. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/placement_policy.h"
#include "scheduler/queue/node_ledger.h"

namespace dljob::scheduler {

// A running job as the plan sees it.
struct RunningGang {
  const Gang* gang = nullptr;
  const std::vector<size_t>* nodes = nullptr;  // one ledger index per worker
  std::optional<int64_t> end;                  // start + time limit; none: never ends
};

struct ReservationPlan {
  bool ever_fits = false;
  std::string never_reason;     // the policy's reason on the emptied cluster, when !ever_fits
  std::optional<int64_t> time;  // none: once the jobs without a time limit end
  Placement placement;
  // Per node (the ledger's order): what is free at `time` beyond what the placement takes.
  // Resources a node does not account for (allocatable 0) read kUnboundedRoom.
  std::vector<Resources> surplus;
};

// `next_bounded` yields the running jobs with a time limit in order of their end (then name),
// and nothing after the last; the plan asks only as far as it needs. `unbounded` gives the
// others, when the plan needs them. REQUIRES: `scratch` a copy of ledger.nodes() (its `used` is
// overwritten).
ReservationPlan PlanReservation(const Gang& head, const NodeLedger& ledger,
                                const std::function<std::optional<RunningGang>()>& next_bounded,
                                const std::function<std::vector<RunningGang>()>& unbounded,
                                std::vector<Node>& scratch, const PlacementPolicy& policy);

// Free resources of a node, with the ones it does not account for at kUnboundedRoom.
Resources FreeResources(const Node& node);

// Sets `masked`'s `used` so each node offers min(free now, surplus): the view a backfilled job
// that outlives the reservation is placed on. Only `nodes` (indices) are updated, or all when
// empty. REQUIRES: `masked` a copy of ledger.nodes(); surplus from the plan.
void MaskReserved(const NodeLedger& ledger, const std::vector<Resources>& surplus,
                  std::vector<Node>& masked, const std::vector<size_t>& nodes = {});

}  // namespace dljob::scheduler
