// JobSupervisor: runs one local job to its end and keeps its record true while it runs.
//
// It executes a LocalPlan (local_plan.h) as an mpirun child, attributes every output line to its
// rank, appends it to the job log, folds metric lines into status.throughput, and saves the
// record whenever it changes (at most once per update interval, and at every transition). It
// applies the run policy locally: a failed attempt restarts the whole job until backoffLimit;
// activeDeadlineSeconds and progressDeadlineSeconds stop it. An interrupt (Ctrl-C, SIGTERM,
// `dljob delete`) stops mpirun gracefully (SIGTERM, then SIGKILL to its process group after a
// grace period) and ends the job Interrupted, with its logs kept.
//
// Not thread-safe; Run() blocks. The store and observer must outlive the supervisor.
#pragma once

#include <chrono>
#include <functional>

#include "cli/backend/backend.h"
#include "cli/local/job_store.h"
#include "cli/local/local_plan.h"
#include "jobs/dljob_types.h"

namespace dljob {

struct SupervisorOptions {
  std::chrono::milliseconds update_interval{1000};
  std::chrono::milliseconds kill_grace{10000};
  // Returns the number of a signal that asked the job to stop (SIGINT, SIGTERM), or 0.
  std::function<int()> interrupt_requested = [] { return 0; };
};

class JobSupervisor {
 public:
  JobSupervisor(JobStore& store, JobObserver& observer, SupervisorOptions options)
      : store_(store), observer_(observer), options_(std::move(options)) {}

  // REQUIRES: store.Create(job) succeeded. Returns the final record (also saved in the store).
  DLJob Run(DLJob job, const LocalPlan& plan);

 private:
  struct Attempt;
  enum class Stop { kNone, kInterrupt, kActiveDeadline, kProgressDeadline };

  int RunAttempt(DLJob& job, Attempt& attempt);
  void HandleLine(DLJob& job, Attempt& attempt, int fd_index, std::string_view raw);
  Stop CheckStop(const DLJob& job, const Attempt& attempt) const;
  void Save(DLJob& job, bool force);

  JobStore& store_;
  JobObserver& observer_;
  SupervisorOptions options_;
  std::chrono::steady_clock::time_point last_save_{};
  std::chrono::steady_clock::time_point job_start_{};
  bool dirty_ = false;
};

}  // namespace dljob
