// Queue policies by name: how the queue orders jobs, what may start behind a waiting head, and
// whether it preempts. The operator's --queue-policy and dljob-sim's policies both come from here.
//   fifo   strict FIFO by submit time (no priorities), no backfill, no preemption
//   dljob  priorities, then FIFO; EASY backfill against the head's reservation; preemption of
//          lower-priority jobs and of queues borrowing quota owed to the waiting job
//   las    Tiresias' discretised least-attained-service (no priorities): fewer GPU-seconds
//          first, anything that fits starts, preemption by suspend
//   sjf    the oracle yardstick (it needs each job's duration): least remaining service first,
//          otherwise as las
// The minimum run time and the las thresholds keep QueueOptions' defaults; callers set them.
// Pure; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "scheduler/queue/queue_types.h"

namespace dljob::scheduler {

std::vector<std::string_view> QueuePolicyNames();  // fifo, dljob, las, sjf
// kInvalidArgument naming the known policies for an unknown name.
Result<QueueOptions> QueueOptionsByName(std::string_view name);

}  // namespace dljob::scheduler
