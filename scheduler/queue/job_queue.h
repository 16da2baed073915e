// JobQueue: the scheduler's queue core. Given the queues, the pending and running jobs, the nodes
// and the time, a scheduling pass decides which jobs start where, which running jobs to suspend
// to make room, and why every other job still waits ("needs 16 GPUs (A100, 2 workers × 8) in
// queue team-a; quota 32, used 24; 12 free, largest node 8; waits for quota").
//
// How a pass works (the options of queue_types.h choose the variant):
//   - Pending jobs go in order: priority, then FIFO by submit time (or least attained service,
//     or the sjf oracle's least remaining service), ties by name.
//   - A job starts when it fits its queue's quota (quota.h: nominal, then borrowing idle quota
//     of its queue's cohort within the borrowing limit) and the placement policy places its
//     whole gang.
//   - A job that does not fit may suspend running jobs (preemption.h): of its own queue, those
//     after it in order; of other queues of its cohort, those borrowing quota it is owed; whole
//     gangs only, the cheapest set, only when that makes it fit, never one that ran less than
//     the minimum run time. Failed attempts stop after one per cohort and GPU product a pass.
//   - The first job that still cannot fit for lack of room is the head. Behind it: nothing
//     (Backfill::kNone), anything that fits (kGreedy), or, with kReservation, only jobs that
//     leave the head's reservation (reservation.h) intact: they end before it by their own time
//     limit, or use only what the reserved placement does not need.
//   - Jobs whose queue does not exist, or which could never fit on this cluster, wait with
//     that reason and do not hold up the jobs behind them.
//
// Elastic jobs (JobRequest::elastic, a range of workers [min, max]; job_queue_elastic.cc):
//   - Waiting, an elastic job asks for its min: quota, reservations, preemption, "can never fit"
//     and its place in line all go by min_workers. When min fits, it starts on the largest size
//     in [min, max] that fits its quota and that the placement policy places now; behind a head
//     with a reservation, on the nodes minus the reservation, so no size delays the head.
//   - Growing: at the end of a pass, a running elastic job below max (in order: priority, then
//     earliest start, then name) grows onto nodes of its product whose free GPUs have been free
//     for at least QueueOptions::grow_after seconds (counted from the last time a job left the
//     node, or from the first pass that saw it free) when no waiting job could run on that
//     product (any pending job of an overlapping product, however
//     it waits, holds growth back: idle GPUs go to waiting jobs first, and no reservation is
//     delayed). It grows by as many workers as fit its quota (borrowing as a start may) and the
//     placement policy places on that idle room, all at once, keeping its workers where they are.
//   - Shrinking: when a blocked job would preempt, every elastic candidate's workers above its
//     min come first, one worker each, before any whole gang (preemption.h takes the cheapest
//     first and puts back what the job does not need). A victim whose shrink suffices is shrunk
//     (a ResizeAction, never below min); one that must go below min is suspended whole. A
//     victim's removable workers are those on the nodes the blocked job could use first (nodes
//     with the most room once the victim's workers leave them first), so its core stays put.
//   - A running elastic job is added (AddRunning) with the placement of its current size.
//
// The queue keeps its own copy of the nodes: SetNodes replaces it (its `used` must count every
// running job), and the queue updates it as it starts, suspends and finishes jobs. The operator
// builds a queue from a snapshot for each pass (ScheduleSnapshot); dljob-sim keeps one for the
// whole replay. A pass's work grows with the jobs that could start, not with the queue's length:
// a job needing more workers than the free GPUs allow is skipped without asking the policy, and
// with QueueOptions::explain off the scan stops once nothing more can start.
//
// Deterministic: the same calls in the same order give the same decisions. The placement policy
// is borrowed and must outlive the queue. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/node_ledger.h"
#include "scheduler/queue/queue_types.h"
#include "scheduler/queue/quota.h"

namespace dljob::scheduler {

class JobQueue {
 public:
  JobQueue(const std::vector<QueueSpec>& queues, const PlacementPolicy& policy,
           QueueOptions options);
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;
  ~JobQueue();

  // Replaces the nodes; their `used` must already count every running job.
  void SetNodes(std::vector<Node> nodes);
  // A job that waits. kInvalidArgument for an empty or known name or an empty gang.
  Status AddPending(JobRequest job, JobHistory history = {});
  // A job already running at `placement` since `start_time` (the nodes already count it). An
  // elastic job runs at the placement's size, which must lie in its range.
  Status AddRunning(JobRequest job, Placement placement, int64_t start_time,
                    JobHistory history = {});
  // A running job ended (finished, failed, deleted): its GPUs and quota are free again and the
  // queue forgets it. kNotFound for a job that is not running.
  Status Finish(std::string_view name, int64_t now);
  // A pending job was withdrawn. kNotFound for a job that is not pending.
  Status Remove(std::string_view name);

  // One scheduling pass at `now`, applied to the queue's own state (see Decision).
  Decision Schedule(int64_t now);
  // Whether later passes fill Decision::waiting (QueueOptions::explain). The decisions are the
  // same either way; a what-if replay (start_estimate.h) explains its first pass only.
  void SetExplain(bool explain) { options_.explain = explain; }

  // Node name → since when its free GPUs have been free, for the nodes with free GPUs whose time
  // is known. A queue rebuilt for each pass (ScheduleSnapshot) is given the previous pass's
  // (after SetNodes), so the idle time that growing waits for adds up across passes; a node that
  // filled up in between starts again from the pass that sees it free.
  std::map<std::string, int64_t> idle_since() const;
  void SetIdleSince(const std::map<std::string, int64_t>& idle_since);

  const std::vector<Node>& nodes() const { return ledger_.nodes(); }
  size_t pending_count() const { return pending_.size(); }
  size_t running_count() const { return running_.size(); }
  const QueueOptions& options() const { return options_; }

  // The discretised level of attained GPU-seconds under `thresholds` (0: the least attained).
  static int64_t LasLevel(const std::vector<int64_t>& thresholds, int64_t gpu_seconds);

 private:
  struct Job;
  struct PendingKey {
    int64_t neg_priority;
    int64_t rank;  // 0, the las level, or the sjf remaining service
    int64_t submit;
    const std::string* name;
    Job* job;
    bool operator<(const PendingKey& o) const;
  };
  struct EndKey {
    int64_t end;
    const std::string* name;
    Job* job;
    bool operator<(const EndKey& o) const;
  };
  struct Pass;

  Status Add(JobRequest job, JobHistory history, std::unique_ptr<Job>& out);
  void Enqueue(Job& job);
  void Run(Job& job, Placement placement, int64_t start);
  void Stop(Job& job, int64_t now);
  int64_t Priority(const Job& job) const;
  int64_t RankAt(const Job& job, int64_t now) const;
  bool Worse(const Job& running, int64_t now, const Job& pending) const;

  bool Consider(Job& job, Pass& pass);
  std::optional<Placement> TryPlace(const Job& job, bool masked);
  std::vector<Job*> PreemptionCandidates(const Job& job, bool quota_blocked, int64_t now) const;
  std::string PreemptWhy(const Job& victim, const Job& job, int64_t now) const;
  bool TryPreempt(Job& job, bool quota_blocked, Pass& pass);
  void Suspend(Job& victim, const Job& job, Pass& pass);
  const std::optional<std::string>& NeverFits(Job& job);
  void BecomeHead(Job& job, Pass& pass);
  void Start(Job& job, Placement placement, bool masked, Pass& pass);
  std::optional<int64_t> NextChange(const Pass& pass) const;

  // Elastic jobs (job_queue_elastic.cc).
  void SetWorkers(Job& job, int64_t workers);
  int64_t RunGpuSeconds(const Job& job, int64_t now) const;
  void AccrueSize(Job& job, int64_t now);
  std::optional<Placement> PlaceLargest(Job& job, bool masked);
  std::vector<size_t> ShrinkOrder(const Job& victim, const Job& job) const;
  void Shrink(Job& victim, std::vector<size_t> positions, const Job& job, Pass& pass);
  void Freed(const std::vector<size_t>& nodes, int64_t now);
  int64_t GrowRoom(const Job& job) const;
  void Grow(Pass& pass);
  bool TryGrow(Job& job, Pass& pass);

  std::string Describe(const Job& job);
  void Wait(Pass& pass, const Job& job, WaitCause cause, const std::string& detail);

  QuotaLedger quota_;
  const PlacementPolicy& policy_;
  QueueOptions options_;
  NodeLedger ledger_;
  RoomCache room_{ledger_, ledger_.nodes()};
  std::vector<Node> scratch_;  // what-if copies of the nodes (same order as the ledger's)
  std::vector<Node> masked_;   // the nodes minus the head's reservation
  RoomCache masked_room_{ledger_, masked_};
  uint64_t masked_version_ = 0;  // changes with masked_
  // The refusals TryPlace has met on the nodes as they are now (ledger_ and masked_ versions): a
  // policy refuses a gang exactly when the nodes that could take its workers have too little
  // room, which its job's name does not change, so a gang of the same shape is refused too.
  // Waiting jobs are mostly alike: a pass asks the policy once per shape, not once per job.
  struct Refusal {
    Gang shape;  // the gang, its job name cleared
    bool masked = false;
    uint64_t nodes_version = 0;
    uint64_t masked_version = 0;
  };
  std::vector<Refusal> refusals_;

  std::unordered_map<std::string, std::unique_ptr<Job>> jobs_;
  std::set<PendingKey> pending_;
  // The running jobs, in no particular order (every use sorts or takes a minimum).
  std::unordered_set<Job*> running_;
  std::multimap<int64_t, Job*> by_start_;  // the running jobs by start time
  std::set<EndKey> bounded_;               // running jobs with a time limit, by end
  // Per node (ledger index): since when its free GPUs have been free: the last time a job left
  // it (ended, was suspended or shrunk), or, for a node free since SetNodes, the first pass that
  // saw it free. None: not known yet.
  std::vector<std::optional<int64_t>> free_since_;
};

// A job in a snapshot: running when it has a placement (an elastic one at the placement's size).
struct JobSnapshot {
  JobRequest request;
  JobHistory history;
  std::optional<Placement> placement;
  int64_t start_time = 0;
};

// One pass over a snapshot of the cluster (the operator's entry point): a JobQueue built from
// `jobs` and `nodes` (whose `used` counts the running jobs), scheduled once at `now`.
// `idle_since`, when given, is the previous pass's JobQueue::idle_since() going in and this
// pass's coming out.
Result<Decision> ScheduleSnapshot(const std::vector<QueueSpec>& queues,
                                  const std::vector<JobSnapshot>& jobs, std::vector<Node> nodes,
                                  int64_t now, const PlacementPolicy& policy,
                                  const QueueOptions& options,
                                  std::map<std::string, int64_t>* idle_since = nullptr);

}  // namespace dljob::scheduler
