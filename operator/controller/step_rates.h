// StepRates: each running job's training speed in steps per second, for its expected end
// (scheduler/queue/start_estimate.h). The operator sees a run's progress only through the status it
// publishes (status.throughput.step at updatedAt), so the speed is reckoned from the reports seen
// pass after pass: (newest step − first step) / (time between them), over the current run. A run
// has a rate once two reports with different steps and times have been seen. A step lower than
// the newest one (the job restarted from a checkpoint, or from scratch) starts the reckoning
// afresh. Sweep() forgets the jobs not observed since the last Sweep(), so finished and deleted
// jobs do not pile up. Pure (times are the caller's whole seconds); not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace dljob::controller {

class StepRates {
 public:
  // The job reported `step` at `at` (Unix seconds).
  void Observe(const std::string& key, int64_t step, int64_t at);
  // Steps per second; nullopt until the run has two distinct reports.
  std::optional<double> Rate(const std::string& key) const;
  // Forgets the jobs not observed since the last Sweep().
  void Sweep();
  size_t size() const { return runs_.size(); }

 private:
  struct Run {
    int64_t first_step = 0;
    int64_t first_at = 0;
    int64_t last_step = 0;
    int64_t last_at = 0;
    bool seen = true;
  };
  std::unordered_map<std::string, Run> runs_;
};

}  // namespace dljob::controller
