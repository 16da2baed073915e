#include "scheduler/queue/queue_policy.h"

#include <string>

namespace dljob::scheduler {

std::vector<std::string_view> QueuePolicyNames() { return {"fifo", "dljob", "las", "sjf"}; }

Result<QueueOptions> QueueOptionsByName(std::string_view name) {
  QueueOptions o;
  if (name == "fifo") {
    o.priorities = false;
    o.backfill = Backfill::kNone;
    o.preemption = false;
    return o;
  }
  if (name == "dljob") {
    o.backfill = Backfill::kReservation;
    o.preemption = true;
    return o;
  }
  if (name == "las" || name == "sjf") {
    o.ordering = name == "las" ? JobOrdering::kLeastAttained : JobOrdering::kShortestRemaining;
    o.priorities = false;
    o.backfill = Backfill::kGreedy;
    o.preemption = true;
    return o;
  }
  std::string known;
  for (std::string_view n : QueuePolicyNames())
    known += (known.empty() ? "" : ", ") + std::string(n);
  return Status::InvalidArgument("unknown queue policy \"" + std::string(name) +
                                 "\" (known: " + known + ")");
}

}  // namespace dljob::scheduler
