// The live progress line of `dljob submit` and its ETA.
//
//   mnist  Running  step 300/937 32%  epoch 1  1520.4 img/s  loss 0.412  acc 86.1%  0:21 ETA 0:38
//
// Pure formatting plus a small estimator fed with (step, time) observations; thread-compatible.
// Durations print as base/human_format.h's ClockDuration; the line is drawn by
// terminal_observer.h through base/progress_printer.h's StatusLine.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "jobs/dljob_types.h"

namespace dljob {

// Estimates time to finish from the step rate since the first observation. Restarts (a step lower
// than the last seen) reset it.
class EtaEstimator {
 public:
  void Observe(int64_t step, std::chrono::steady_clock::time_point t);
  std::optional<std::chrono::seconds> Remaining(int64_t total_steps) const;

 private:
  std::optional<std::pair<int64_t, std::chrono::steady_clock::time_point>> first_, last_;
};

// The one-line summary of a job's progress; no trailing newline. `width` > 0 truncates to fit.
std::string FormatProgress(const DLJob& job, std::chrono::seconds elapsed,
                           std::optional<std::chrono::seconds> eta, size_t width = 0);

}  // namespace dljob
