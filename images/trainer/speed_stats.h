// Throughput statistics in the style of tf_cnn_benchmarks.
//
// From the wall time of each timed step, the per-step speeds are images_per_step / seconds.
// mean is their mean; uncertainty the standard error of the mean (std / sqrt(n)); jitter the
// median absolute deviation scaled by 1.4826 (a robust standard deviation). Pure; thread-safe.
#pragma once

#include <vector>

namespace dljob::trainer {

struct SpeedStats {
  double mean = 0.0;
  double uncertainty = 0.0;
  double jitter = 0.0;
};

// REQUIRES: every step time > 0. Empty input gives all zeros.
SpeedStats ComputeSpeedStats(double images_per_step, const std::vector<double>& step_seconds);

}  // namespace dljob::trainer
