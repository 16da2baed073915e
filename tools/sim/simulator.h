// The trace simulator's engine: replays a trace through the queue core (scheduler/queue)
// and a placement policy — the very code the operator runs — on simulated time, with no API
// server. Jobs arrive at their submit times, run their duration (resuming where they were when
// suspended, after paying the preemption overhead), and end; a run that reaches its time limit
// ends there, as Kubernetes would fail it. After the events of each instant, one scheduling pass.
//
// Policies (SimPolicyNames): the queue's order, backfill and preemption, and the placement:
//   fifo      strict FIFO by submit time, no backfill, no preemption; first-fit placement
//   spread    the same with spread placement
//   best-fit  the same with best-fit placement
//   dljob     priorities, then FIFO; EASY backfill against the head's reservation; preemption of
//             lower priority (after the minimum run time); dljob placement
//   las       Tiresias' discretised least-attained-service: fewer GPU-seconds first, anything
//             that fits starts, preemption by suspend after the minimum run time; dljob placement
//   sjf       the oracle yardstick: least remaining GPU-seconds first (it knows durations),
//             otherwise as las
//
// Deterministic: the same trace and options give the same result. Not thread-safe; one
// Simulate call per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "scheduler/queue/queue_types.h"
#include "tools/sim/trace.h"

namespace dljob::scheduler::sim {

struct SimOptions {
  int64_t preemption_overhead = 30;  // seconds a suspended job's next run spends restoring
  int64_t min_run_time = 600;        // a running job may be suspended only after this long
  // kLeastAttained's level boundaries in GPU-seconds.
  std::vector<int64_t> las_thresholds = {3600, 8 * 3600, 64 * 3600};
};

struct SimPolicy {
  std::string name;
  std::string placement;  // a MakePlacementPolicy name
  QueueOptions queue;
  int64_t preemption_overhead = 0;
};

// "fifo", "spread", "best-fit", "dljob", "las", "sjf".
std::vector<std::string_view> SimPolicyNames();
// kInvalidArgument naming the known policies for an unknown name.
Result<SimPolicy> SimPolicyByName(std::string_view name, const SimOptions& options);

// What happened to one job.
struct JobOutcome {
  std::optional<int64_t> first_start;
  std::optional<int64_t> finish;  // none: never ran to its end (it never fit, or no queue)
  int64_t held = 0;               // seconds on GPUs, overheads included
  int64_t preemptions = 0;
  bool deadline_exceeded = false;  // its run reached its time limit
};

// GPUs allocated from `time` on (a step function).
struct AllocationPoint {
  int64_t time = 0;
  int64_t gpus = 0;
};

struct SimResult {
  std::string policy;
  std::vector<JobOutcome> jobs;  // in the trace's order
  std::vector<AllocationPoint> allocation;
  int64_t total_gpus = 0;
  // ∫ allocated GPUs dt and ∫ dt over the instants with a job pending or running.
  double allocated_gpu_seconds = 0;
  double busy_seconds = 0;
  // The same over the instants with a job pending.
  double queued_allocated_gpu_seconds = 0;
  double queued_seconds = 0;
  // Time-weighted fraction of free GPUs that sat on nodes with fewer free GPUs than the blocked
  // head job's worker needs (so no worker of it could go there), over the time a head was
  // blocked with GPUs free.
  double fragmented_gpu_seconds = 0;
  double free_gpu_seconds_while_blocked = 0;
  int64_t preemptions = 0;
  int64_t passes = 0;
  double wall_seconds = 0;
};

// Called now and then with the jobs ended so far and the simulated time.
using SimProgress = std::function<void(size_t ended, size_t total, int64_t now)>;

// kInvalidArgument when the trace names an unknown placement policy or a job the queue refuses.
Result<SimResult> Simulate(const Trace& trace, const SimPolicy& policy,
                           const SimProgress& progress = nullptr);

}  // namespace dljob::scheduler::sim
