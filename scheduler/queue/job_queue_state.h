// The queue's record of one job and what a scheduling pass carries from job to job: shared by
// job_queue.cc and job_queue_elastic.cc, private to the queue core. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/reservation.h"

namespace dljob::scheduler {

struct JobQueue::Job {
  JobRequest req;
  JobHistory history;
  std::string product;           // GangProduct(req.gang)
  int product_id = kAnyProduct;  // the ledger's id of it
  int64_t gpus = 0;              // at its current size (pending elastic: at its min)
  // Its range of workers; both gang.workers for a rigid job. req.gang.workers is the current
  // size: running, the placement's; pending, min_workers (what it needs to start).
  int64_t min_workers = 0;
  int64_t max_workers = 0;
  std::optional<size_t> account;  // its quota account; none: unknown queue, or no quota for it
  bool running = false;
  int64_t start = 0;
  int64_t size_since = 0;       // when the current size began: the start or the last resize
  int64_t run_gpu_seconds = 0;  // GPU-seconds of this run before size_since
  Placement placement;
  std::vector<size_t> nodes;  // the placement's nodes, as ledger indices (known nodes only)
  PendingKey key{};
  // Whether it fits these nodes with every running job gone, once a pass asked (until SetNodes).
  bool fit_checked = false;
  std::optional<std::string> never_fits;  // why not
};

// What one pass carries from job to job.
struct JobQueue::Pass {
  int64_t now = 0;
  Decision decision;
  Job* head = nullptr;                  // the first job that waits for room
  const Job* first_blocked = nullptr;   // the first job that waits, for room or quota
  std::optional<ReservationPlan> plan;  // the head's, with Backfill::kReservation
  // (cohort, product id) of preemption attempts that found nothing: a job of another cohort may
  // still reclaim quota its own cohort lent out.
  std::set<std::pair<size_t, int>> failed_preemptions;
  std::unordered_set<const Job*> stopped;  // suspended in this pass
  std::unordered_map<const Job*, std::pair<WaitCause, std::string>> reasons;  // why each waits
  std::optional<int64_t> grow_at;  // when idle GPUs will have been idle long enough to grow onto
};

}  // namespace dljob::scheduler
