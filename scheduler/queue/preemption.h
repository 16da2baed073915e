// Which running jobs to suspend so a blocked job fits: the cheapest set of whole gangs that
// makes it placeable (and, where quota blocks it, fit its queue's quota), or none at all.
//
// The candidates come in order of cost, cheapest first (the caller decides who may be
// preempted and what cost means). The plan takes them off a scratch copy of the nodes one by one
// until the job both fits its quota and the placement policy places it, then puts back each
// victim, most expensive first, that the job does not need after all. A gang is always taken
// whole, so no job is ever left below its size. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/placement_policy.h"
#include "scheduler/queue/node_ledger.h"
#include "scheduler/queue/quota.h"
#include "scheduler/queue/reservation.h"

namespace dljob::scheduler {

struct PreemptionCandidate {
  RunningGang running;
  size_t account = 0;      // its quota account
  int64_t quota_gpus = 0;  // GPUs it gives back to the pool the preemptor draws on (0: none)
};

struct PreemptionPlan {
  std::vector<size_t> victims;  // indices into the candidates, in the order given
  Placement placement;          // the job's placement once the victims are gone
};

// Whether the job fits its quota once these candidates give their GPUs back.
using QuotaFits = std::function<bool(const std::vector<FreedQuota>&)>;

// REQUIRES: `scratch` a copy of ledger.nodes() (its `used` is overwritten).
std::optional<PreemptionPlan> PlanPreemption(const Gang& job,
                                             const std::vector<PreemptionCandidate>& candidates,
                                             const QuotaFits& quota_fits, const NodeLedger& ledger,
                                             std::vector<Node>& scratch,
                                             const PlacementPolicy& policy);

}  // namespace dljob::scheduler
