// The queue core's vocabulary: queues and their GPU quotas, a job as the queue sees it, the
// options that make one queue behave as fifo, dljob, las or sjf, and the decision a scheduling
// pass returns (start these, suspend those, resize these elastic ones, and why every other job
// still waits).
//
// Times are whole seconds on the caller's clock (Unix seconds in the operator, trace seconds in
// dljob-sim); the queue never reads a clock. Plain data; copy freely.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cluster.h"

namespace dljob::scheduler {

// A quota or limit with no bound. Sums of a few of them do not overflow int64.
inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 16;

inline constexpr char kDefaultQueue[] = "default";

// GPUs a queue may use of one product. `nominal` is its own; beyond it, it may borrow idle
// nominal quota of that product from the other queues of its cohort (QueueSpec::cohort), up to
// `borrowing_limit` more.
struct QueueQuota {
  int64_t nominal = kUnlimited;
  int64_t borrowing_limit = 0;
  bool operator==(const QueueQuota&) const = default;
};

// A queue: its quota per GPU product (the nvidia.com/gpu.product label value). A job asking for
// product P is charged to the entry for P when the queue has one, else to the entry "" (any
// product); with neither, the queue has no quota for it and the job waits.
struct QueueSpec {
  std::string name;
  std::map<std::string, QueueQuota> quotas;
  // The queues that lend each other idle nominal quota (Kueue's cohort): those with the same
  // value. "" is the default cohort, of every queue that names none. Last and with an
  // initializer, so that {name, quotas} is still a queue of the default cohort.
  std::string cohort = {};
  bool operator==(const QueueSpec&) const = default;
};

// The one queue of a cluster with no queues configured: any product, no limit.
QueueSpec UnlimitedQueue(std::string name = kDefaultQueue);

// An elastic job's sizes, in whole workers (spec.elastic's GPUs over gpusPerWorker): it may run
// on any number of workers from min_workers to max_workers.
struct ElasticRange {
  int64_t min_workers = 0;
  int64_t max_workers = 0;
  bool operator==(const ElasticRange&) const = default;
};

// What the queue needs to know of one job.
struct JobRequest {
  std::string name;                   // unique; "namespace/name" in the operator
  std::string queue = kDefaultQueue;  // spec.scheduling.queue
  int64_t priority = 0;               // spec.scheduling.priority; higher goes first
  int64_t submit_time = 0;            // FIFO order within a priority (ties by name)
  Gang gang;
  // runPolicy.activeDeadlineSeconds: how long one run may last from its start. The queue
  // plans reservations with it; a running job without one counts as never ending.
  std::optional<int64_t> time_limit;
  // Only the sjf oracle reads this: the job's total running time.
  std::optional<int64_t> duration;
  // Set: the job is elastic, and gang.workers must equal max_workers (the most it asks for).
  // It starts on the most workers in the range that fit (at least min_workers), grows onto idle
  // GPUs and is shrunk, before it would be suspended, to make room (job_queue.h).
  std::optional<ElasticRange> elastic = {};
  bool operator==(const JobRequest&) const = default;
};

// What a job has already had: time held on GPUs in earlier runs (it resumes from a checkpoint,
// so this is service attained, not lost) and how often it was suspended to make room.
struct JobHistory {
  int64_t attained_seconds = 0;      // wall time of earlier runs
  int64_t attained_gpu_seconds = 0;  // the same, times the job's GPUs
  int64_t preemptions = 0;
  bool operator==(const JobHistory&) const = default;
};

// Which pending job goes first.
enum class JobOrdering {
  kPriorityFifo,  // priority (higher first), then submit time, then name
  // Tiresias' discretised least-attained-service: priority, then the level of GPU-seconds
  // attained (QueueOptions::las_thresholds; fewer first), then submit time.
  kLeastAttained,
  // The oracle yardstick: priority, then the least remaining service (GPUs × (duration −
  // attained seconds)) first, then submit time.
  kShortestRemaining,
};

// What may start while the first job in order (the head) cannot.
enum class Backfill {
  kNone,         // strict order: nothing starts behind a head that waits for room
  kReservation,  // EASY backfill: only what leaves the head's reservation intact
  kGreedy,       // anything that fits (las and sjf: no runtime estimates to reserve with)
};

struct QueueOptions {
  JobOrdering ordering = JobOrdering::kPriorityFifo;
  // Off: every job counts as priority 0 (plain FIFO, las and sjf as their papers have them).
  bool priorities = true;
  Backfill backfill = Backfill::kReservation;
  // Whether a blocked job may suspend running ones: those of its own queue that come after it
  // in order (lower priority; for las a higher attained level; for sjf more remaining service),
  // and those of other queues of its cohort that borrow quota it is owed.
  bool preemption = true;
  // A running job may be suspended only after running this long, so jobs do not thrash.
  int64_t min_run_time = 0;
  // kLeastAttained: the GPU-second boundaries between levels, ascending.
  std::vector<int64_t> las_thresholds = {3600, 8 * 3600, 64 * 3600};
  // An elastic job below its max grows only onto GPUs of its product that have been free for at
  // least this many seconds (and that no waiting job could use), so that a job ending does not
  // hand its GPUs to a running job the moment before a waiting one arrives.
  int64_t grow_after = 300;
  // Whether Decision::waiting is filled. Off, a pass stops scanning as soon as nothing else can
  // start (the simulator's fast path).
  bool explain = true;
};

struct StartAction {
  std::string job;
  Placement placement;
  bool backfilled = false;  // started behind a head that waits for room
  bool operator==(const StartAction&) const = default;
};

struct PreemptAction {
  std::string job;
  std::string for_job;  // the job it makes room for
  std::string reason;   // e.g. "suspended for team-a/big (priority 10 > 0)"
  bool operator==(const PreemptAction&) const = default;
};

// An elastic job changes size: the caller restarts it from its checkpoint on `placement`, the
// whole new gang (a shrink keeps the workers it does not remove where they were; a grow keeps
// every worker and adds the new ones at the end).
struct ResizeAction {
  std::string job;
  Placement placement;
  int64_t from_workers = 0;
  int64_t to_workers = 0;
  std::string for_job;  // a shrink: the job it makes room for; "" for a grow
  // "shrunk 4 → 2 workers for team-a/big (priority 10 > 0)", "grew 2 → 4 workers onto GPUs idle
  // for 300 s"
  std::string reason;
  bool operator==(const ResizeAction&) const = default;
};

// What a waiting job waits for, for a machine to branch on (the reason says it to a person).
enum class WaitCause {
  kNotConsidered,  // the pass did not get to it
  kNoQueue,        // its queue does not exist, or has no quota for its GPU product
  kQuota,          // its queue's quota (with what it may borrow) is used up
  kRoom,           // first in line; waits for room to free up (or for its reservation)
  kBehind,         // behind the first job in line: strict order, or it would delay its reservation
  kNeverFits,      // no node set of this cluster could ever hold the gang
  kPreempted,      // suspended by this pass to make room for another job
};

struct WaitingJob {
  std::string job;
  std::string reason;  // a sentence a person can act on
  WaitCause cause = WaitCause::kNotConsidered;
  bool operator==(const WaitingJob&) const = default;
};

// The head's reservation: the earliest time its placement will be free, going by the running
// jobs' time limits. No time: only once jobs without a time limit end.
struct Reservation {
  std::string job;
  std::optional<int64_t> time;
  Placement placement;
  bool operator==(const Reservation&) const = default;
};

// One pass's decision, already applied to the queue's own state (the preempted jobs are pending
// again, the started ones running, the resized ones at their new size). The caller suspends
// `preempt` and shrinks the jobs of `resize` that shrink first, then starts `start` and grows the
// others: each start's placement assumes the preempted and shrunk jobs' resources are free, and a
// grow uses only what is free after every start.
struct Decision {
  std::vector<PreemptAction> preempt;
  std::vector<StartAction> start;
  std::vector<ResizeAction> resize;  // shrinks (in the order made), then grows
  std::vector<WaitingJob> waiting;   // in queue order; empty unless QueueOptions::explain
  std::optional<Reservation> reservation;
  // The first job in order that waits for room (not for quota), if any.
  std::optional<std::string> blocked_head;
  // A time at which a pass may decide differently even if nothing else happens (a running
  // job's minimum run time ends, its attained-service level drops, or idle GPUs have been idle
  // for QueueOptions::grow_after and an elastic job may grow onto them); later than `now`.
  std::optional<int64_t> next_change;
};

}  // namespace dljob::scheduler
