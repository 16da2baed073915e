#include "images/trainer/speed_stats.h"

#include <algorithm>
#include <cmath>

namespace dljob::trainer {
namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

SpeedStats ComputeSpeedStats(double images_per_step, const std::vector<double>& step_seconds) {
  SpeedStats stats;
  if (step_seconds.empty()) return stats;
  std::vector<double> speeds;
  speeds.reserve(step_seconds.size());
  for (double t : step_seconds) speeds.push_back(images_per_step / t);
  double sum = 0.0;
  for (double s : speeds) sum += s;
  const double n = static_cast<double>(speeds.size());
  stats.mean = sum / n;
  double squares = 0.0;
  for (double s : speeds) squares += (s - stats.mean) * (s - stats.mean);
  stats.uncertainty = std::sqrt(squares / n) / std::sqrt(n);  // numpy's std (ddof=0)
  const double median = Median(speeds);
  std::vector<double> deviations;
  deviations.reserve(speeds.size());
  for (double s : speeds) deviations.push_back(std::fabs(s - median));
  stats.jitter = 1.4826 * Median(deviations);
  return stats;
}

}  // namespace dljob::trainer
