#include "scheduler/queue/preemption.h"

namespace dljob::scheduler {

std::optional<PreemptionPlan> PlanPreemption(const Gang& job,
                                             const std::vector<PreemptionCandidate>& candidates,
                                             const QuotaFits& quota_fits, const NodeLedger& ledger,
                                             std::vector<Node>& scratch,
                                             const PlacementPolicy& policy) {
  ledger.CopyUsedTo(scratch);
  RoomBound room(ledger, scratch, ledger.ProductId(GangProduct(job)), job.per_worker.gpus);
  auto move = [&](const RunningGang& r, int sign) { room.Apply(*r.gang, *r.nodes, sign, scratch); };
  std::vector<bool> taken(candidates.size(), false);
  auto freed = [&]() {
    std::vector<FreedQuota> out;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (taken[i] && candidates[i].quota_gpus > 0) {
        out.push_back({candidates[i].account, candidates[i].quota_gpus});
      }
    }
    return out;
  };
  auto place = [&]() -> std::optional<Placement> {
    if (room.room() < job.workers || !quota_fits(freed())) return std::nullopt;
    return policy.TryPlace(job, scratch);
  };

  std::optional<Placement> placement;
  size_t last = 0;
  for (; last < candidates.size() && !placement; ++last) {
    move(candidates[last].running, -1);
    taken[last] = true;
    placement = place();
  }
  if (!placement) return std::nullopt;
  // Put back, most expensive first, every victim the job turns out not to need (not the last
  // one taken: without it, it did not fit).
  for (size_t i = last - 1; i-- > 0;) {
    move(candidates[i].running, +1);
    taken[i] = false;
    if (std::optional<Placement> without = place()) {
      placement = std::move(without);
    } else {
      move(candidates[i].running, -1);
      taken[i] = true;
    }
  }
  PreemptionPlan plan;
  plan.placement = std::move(*placement);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (taken[i]) plan.victims.push_back(i);
  }
  return plan;
}

}  // namespace dljob::scheduler
