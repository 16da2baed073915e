// JobSupervisor: runs one local job to its end and keeps its record true while it runs.
//
// It executes a LocalPlan (local_plan.h) as an mpirun child, attributes every output line to its
// rank, appends it to the job log, folds metric lines into status.throughput, and saves the
// record whenever it changes (at most once per update interval, and at every transition). It
// carries out the run policy (jobs/run_policy.h, the rules the operator follows too): a failed
// attempt restarts the whole job until backoffLimit; activeDeadlineSeconds and
// progressDeadlineSeconds stop it (suspend is not honoured locally). An interrupt (Ctrl-C,
// SIGTERM, `dljob delete`) stops the job gracefully — SIGTERM to the ranks themselves (so that a
// dljob-train rank can write its checkpoint; stop_signal.h), then SIGKILL to mpirun's process
// group after kill_grace — and ends the job Interrupted, with its logs kept.
//
// Not thread-safe; Run() blocks. The store, observer and clock must outlive the supervisor.
#pragma once

#include <chrono>
#include <functional>

#include "base/clock.h"
#include "base/time_format.h"
#include "cli/backend/backend.h"
#include "cli/local/job_store.h"
#include "cli/local/local_plan.h"
#include "jobs/dljob_types.h"
#include "jobs/log_lines.h"
#include "jobs/run_policy.h"

namespace dljob {

struct SupervisorOptions {
  std::chrono::milliseconds update_interval{1000};
  std::chrono::milliseconds kill_grace{10000};
  // Returns the number of a signal that asked the job to stop (SIGINT, SIGTERM), or 0.
  std::function<int()> interrupt_requested = [] { return 0; };
};

class JobSupervisor {
 public:
  // The clock gives the record's stamps, the policy's deadlines and the save interval.
  JobSupervisor(JobStore& store, JobObserver& observer, Clock& clock, SupervisorOptions options)
      : store_(store), observer_(observer), clock_(clock), options_(std::move(options)) {}

  // REQUIRES: store.Create(job) succeeded. Returns the final record (also saved in the store).
  DLJob Run(DLJob job, const LocalPlan& plan);

 private:
  struct Attempt;

  int RunAttempt(DLJob& job, Attempt& attempt);
  void HandleLine(DLJob& job, Attempt& attempt, int fd_index, std::string_view raw);
  // Records `line` in the attempt's metrics and the job's throughput when it is a metric line.
  bool TakeMetric(DLJob& job, Attempt& attempt, const MpirunLine& line);
  bool CheckStop(const DLJob& job, Attempt& attempt) const;  // true: stop the attempt
  RunObservation Observed(const DLJob& job, const Attempt& attempt, AttemptState state) const;
  RunDecision DecideEnded(const DLJob& job, const Attempt& attempt, int wait_status) const;
  // Wall time that never jumps: the deadlines follow the monotonic clock from the job's start.
  WallTime PolicyNow() const;
  std::string NowStamp() const;  // the clock's wall time, RFC 3339
  void Save(DLJob& job, bool force);

  JobStore& store_;
  JobObserver& observer_;
  Clock& clock_;
  SupervisorOptions options_;
  Clock::MonotonicTime last_save_{};
  Clock::MonotonicTime job_start_{};
  WallTime job_start_wall_{};
  bool dirty_ = false;
};

}  // namespace dljob
