// A trial's throughput from the metric lines its ranks printed (jobs/metric_line.h).
//
// The rate of a line is its "words_per_sec" (language models) when it has one, else its
// "images_per_sec"; the unit follows. dljob-train prints a line every --display_every steps with
// the rate of that window, and at the end one with its whole timed run's rate. So per rank the
// last line is the run's rate and the earlier ones are windows. The trial's throughput is the sum
// over ranks of each rank's last rate, scaled up to world_size when fewer ranks report (as
// jobs/metric_line.h's ProgressAggregator does). Its noise is the relative standard error of a
// rank's rate, estimated robustly from its windows: 1.4826 × MAD / median / sqrt(windows), the
// largest over ranks (0 when no rank has 3 windows). Startup is the time of the first line.
// Pure; thread-safe.
#pragma once

#include <vector>

#include "cli/advise/trial.h"
#include "jobs/metric_line.h"

namespace dljob::advise {

struct TimedSample {
  double seconds = 0;  // since the trial's launch
  MetricSample sample;
};

// Fills throughput, unit, noise and startup_seconds of `out`; sets ok = false with an error when
// no line carried a rate. Leaves the other fields alone.
void SummarizeMetrics(const std::vector<TimedSample>& samples, TrialMeasurement& out);

// The median of `v` (the mean of the middle two for an even count). REQUIRES: v is not empty.
double Median(std::vector<double> v);

}  // namespace dljob::advise
