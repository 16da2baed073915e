#include "operator/scheduler/sim/simulator.h"

namespace dljob::scheduler::sim {

std::vector<std::string_view> SimPolicyNames() {
  return {"fifo", "spread", "best-fit", "dljob", "las", "sjf"};
}

Result<SimPolicy> SimPolicyByName(std::string_view name, const SimOptions& options) {
  SimPolicy p;
  p.name = std::string(name);
  p.queue.explain = false;
  p.queue.min_run_time = options.min_run_time;
  p.queue.las_thresholds = options.las_thresholds;
  p.preemption_overhead = options.preemption_overhead;
  if (name == "fifo" || name == "spread" || name == "best-fit") {
    p.placement = name == "fifo" ? "first-fit" : std::string(name);
    p.queue.priorities = false;
    p.queue.backfill = Backfill::kNone;
    p.queue.preemption = false;
    return p;
  }
  p.placement = "dljob";
  if (name == "dljob") {
    p.queue.backfill = Backfill::kReservation;
    p.queue.preemption = true;
    return p;
  }
  if (name == "las" || name == "sjf") {
    p.queue.ordering =
        name == "las" ? JobOrdering::kLeastAttained : JobOrdering::kShortestRemaining;
    p.queue.priorities = false;
    p.queue.backfill = Backfill::kGreedy;
    p.queue.preemption = true;
    return p;
  }
  std::string known;
  for (std::string_view n : SimPolicyNames()) known += (known.empty() ? "" : ", ") + std::string(n);
  return Status::InvalidArgument("unknown policy \"" + std::string(name) + "\" (known: " + known +
                                 ")");
}

}  // namespace dljob::scheduler::sim
