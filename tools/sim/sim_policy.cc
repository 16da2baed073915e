#include "scheduler/queue/queue_policy.h"
#include "tools/sim/simulator.h"

namespace dljob::scheduler::sim {

std::vector<std::string_view> SimPolicyNames() {
  return {"fifo", "spread", "best-fit", "dljob", "las", "sjf"};
}

// fifo, spread and best-fit are the fifo queue over first-fit, spread and best-fit placement;
// dljob, las and sjf are those queue policies over dljob placement.
Result<SimPolicy> SimPolicyByName(std::string_view name, const SimOptions& options) {
  const bool plain = name == "fifo" || name == "spread" || name == "best-fit";
  const bool queue = name == "dljob" || name == "las" || name == "sjf";
  if (!plain && !queue) {
    std::string known;
    for (std::string_view n : SimPolicyNames()) {
      known += (known.empty() ? "" : ", ") + std::string(n);
    }
    return Status::InvalidArgument("unknown policy \"" + std::string(name) + "\" (known: " + known +
                                   ")");
  }
  Result<QueueOptions> q = QueueOptionsByName(plain ? "fifo" : name);
  if (!q.ok()) return q.status();
  SimPolicy p;
  p.name = std::string(name);
  p.placement = name == "fifo" ? "first-fit" : plain ? std::string(name) : "dljob";
  p.queue = *q;
  p.queue.explain = false;
  p.queue.min_run_time = options.min_run_time;
  p.queue.las_thresholds = options.las_thresholds;
  p.preemption_overhead = options.preemption_overhead;
  p.resize_overhead = options.resize_overhead;
  p.rigid = options.rigid;
  p.queue.grow_after = options.grow_after;
  p.estimates = options.estimates;
  p.record_events = options.record_events;
  return p;
}

std::string_view SimEventName(SimEventKind kind) {
  switch (kind) {
    case SimEventKind::kStart:
      return "start";
    case SimEventKind::kEnd:
      return "end";
    case SimEventKind::kDeadline:
      return "deadline";
    case SimEventKind::kPreempt:
      return "preempt";
    case SimEventKind::kShrink:
      return "shrink";
    case SimEventKind::kGrow:
      return "grow";
  }
  return "?";
}

}  // namespace dljob::scheduler::sim
