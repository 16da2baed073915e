// The trace simulator's engine: replays a trace through the queue core (scheduler/queue)
// and a placement policy — the very code the operator runs — on simulated time, with no API
// server. Jobs arrive at their submit times, run their duration (resuming where they were when
// suspended, after paying the preemption overhead), and end; a run that reaches its time limit
// ends there, as Kubernetes would fail it. After the events of each instant, one scheduling pass.
// An elastic job's work is GPU-seconds (its duration × its max GPUs, scaling linearly): on fewer
// GPUs it runs longer, and each resize (Decision::resize) costs it the resize overhead (a
// checkpoint and a restart) before it makes progress again. Its time limit counts from the
// run's start, across resizes.
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
// Every policy can score start-time estimates as it goes (EstimateScoring); those of las and sjf
// come from the same replay, without reservations.
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
#include "scheduler/queue/start_estimate.h"
#include "tools/sim/trace.h"

namespace dljob::scheduler::sim {

// How a replay scores start-time estimates (scheduler/queue/start_estimate.h). Every `sample`-th
// job of the trace (by index; 1: every job) is scored: after the pass at its submission, if it
// waits, the waiting jobs are estimated, and again after the first pass `every` simulated seconds
// after the last estimate while jobs wait. A scored job keeps its first estimate (the one at its
// submission) and each later one that differs from the one before. Each estimate replays the
// whole queue, so on a large trace `sample` and `every` bound the cost. What the estimate is told
// of each run:
//   - a running job's expected end "from its steps and images/sec" is its true end here (a job
//     whose images/sec is steady reports exactly that), or, with `noise` > 0, its true remaining
//     time times a factor drawn once per run from U(1 − noise, 1 + noise) (a steady rate that is
//     off, as a job's is when its speed changes); a suspended job's next run, likewise;
//   - a job that never ran is expected to run to its time limit (all the operator knows of it).
struct EstimateScoring {
  int64_t sample = 1;
  int64_t every = 300;
  double noise = 0;
  uint64_t seed = 1;
  EstimateOptions options;
};

struct SimOptions {
  int64_t preemption_overhead = 30;  // seconds a suspended job's next run spends restoring
  int64_t resize_overhead = 30;      // seconds a resized elastic job spends restarting
  int64_t grow_after = 300;          // QueueOptions::grow_after
  bool rigid = false;                // run elastic jobs as rigid ones at their max
  int64_t min_run_time = 600;        // a running job may be suspended only after this long
  // kLeastAttained's level boundaries in GPU-seconds.
  std::vector<int64_t> las_thresholds = {3600, 8 * 3600, 64 * 3600};
  // Start-time estimates are scored when set. Each estimate replays the queue, so a replay with
  // them takes minutes where one without takes seconds.
  std::optional<EstimateScoring> estimates;
  bool record_events = false;  // SimResult::events
};

struct SimPolicy {
  std::string name;
  std::string placement;  // a MakePlacementPolicy name
  QueueOptions queue;
  int64_t preemption_overhead = 0;
  int64_t resize_overhead = 0;
  bool rigid = false;  // elastic jobs run at their max, never resized
  std::optional<EstimateScoring> estimates;
  bool record_events = false;  // SimResult::events
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
  int64_t resizes = 0;
  bool deadline_exceeded = false;  // its run reached its time limit
};

// One start-time estimate of a job that had not started yet.
struct EstimateRecord {
  int64_t made_at = 0;
  std::optional<int64_t> time;  // none: unknown
  EstimateBasis basis = EstimateBasis::kUnknown;
  bool operator==(const EstimateRecord&) const = default;
};

// What happened to a job at an instant, for a person reading a replay (SimPolicy::record_events).
enum class SimEventKind { kStart, kEnd, kDeadline, kPreempt, kShrink, kGrow };
std::string_view SimEventName(SimEventKind kind);  // "start", "end", "deadline", ...

struct SimEvent {
  int64_t time = 0;
  size_t job = 0;  // trace index
  SimEventKind kind = SimEventKind::kStart;
  int64_t gpus = 0;     // the job's GPUs after the event (0: not running)
  std::string for_job;  // a preemption or shrink: the job it made room for
  bool operator==(const SimEvent&) const = default;
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
  int64_t resizes = 0;
  int64_t passes = 0;
  std::vector<SimEvent> events;  // with SimPolicy::record_events, in the order they happened
  double wall_seconds = 0;
  // With SimPolicy::estimates, per job (the trace's order): the estimates made before its first
  // start — the first (at its submission), then each that differed from the one before it; empty
  // for a job that was not scored or never waited.
  std::vector<std::vector<EstimateRecord>> estimates;
  int64_t estimate_runs = 0;         // EstimateStarts calls
  int64_t estimate_capped = 0;       // of them, stopped by EstimateOptions::max_passes
  double estimate_wall_seconds = 0;  // of wall_seconds, spent estimating
};

// Called now and then with the jobs ended so far and the simulated time.
using SimProgress = std::function<void(size_t ended, size_t total, int64_t now)>;

// kInvalidArgument when the trace names an unknown placement policy or a job the queue refuses.
Result<SimResult> Simulate(const Trace& trace, const SimPolicy& policy,
                           const SimProgress& progress = nullptr);

}  // namespace dljob::scheduler::sim
