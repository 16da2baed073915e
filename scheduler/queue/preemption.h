// Which running workers to take away so a blocked job fits: the cheapest set of candidates that
// makes it placeable (and, where quota blocks it, fit its queue's quota), or none at all.
//
// A candidate is a set of workers of one running job: a whole gang, or a part of one (the queue
// offers an elastic job's workers above its minimum one at a time, as cheaper candidates than
// any whole gang, and the rest of that job as one more, so that shrinking comes before
// suspending). The candidates come in order of cost, cheapest first (the caller decides who may
// be preempted, how jobs are cut into candidates and what cost means). The plan takes them off a
// scratch copy of the nodes one by one until the job both fits its quota and the placement
// policy places it, then puts back each candidate, most expensive first, that the job does not
// need after all. It never splits a candidate, so a caller that offers only whole gangs and
// parts above a job's minimum never leaves a job below it. Pure.
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
