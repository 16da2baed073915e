// Where more of a resource stops buying throughput: the saturation rule of `dljob advise`.
//
// Input: the trials of one axis (threads per rank, loader threads, memory cap) as points
// (setting, throughput, relative noise, ok). The rule, in order:
//   1. Failed points (crashed, out of memory) are not candidates, and neither is any setting at or
//      below a failed one: a cap that once ran out of memory is not trusted because a smaller one
//      happened to pass.
//   2. The band: band = max(tolerance, 2 × the largest relative noise of the ok points), so a
//      noisy machine widens the band instead of letting one lucky trial set the bar (two
//      standard errors: a difference inside it is not one the trials can tell apart). (Noise is the
//      relative standard error of a trial's throughput, from the spread of its own windows.)
//   3. best = the highest throughput among candidates; chosen = the smallest candidate setting
//      whose throughput is within the band of best (>= best × (1 − band)). That is the knee: the
//      point after which more of the resource buys less than the band.
//   4. The curve's shape, for the explanation: single (one point), flat (every candidate within
//      the band: the resource does not matter here; take the least), still rising (the chosen
//      setting is the largest tried and it beats the next smaller one by more than the band: try
//      larger settings), falls (the largest candidate is below the band: more of it makes things
//      worse, e.g. oversubscribed cores), else saturates.
// Pure; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dljob::advise {

struct AxisPoint {
  double setting = 0;  // larger = more of the resource
  double value = 0;    // throughput; ignored when !ok
  double noise = 0;    // relative standard error of value (0: unknown)
  bool ok = true;
};

enum class CurveShape { kSingle, kFlat, kSaturates, kStillRising, kFalls };
const char* ShapeName(CurveShape shape);  // "single", "flat", "saturates", "still rising", "falls"

struct Saturation {
  double chosen = 0;  // the setting recommended
  double best = 0;    // the setting with the highest throughput
  double band = 0;    // relative, e.g. 0.05
  double chosen_value = 0;
  double best_value = 0;
  CurveShape shape = CurveShape::kSingle;
  std::optional<double> highest_failed;  // the largest setting that failed, if any
};

// Points in any order. nullopt when no point is a candidate (all failed, or every ok setting lies
// at or below a failed one). REQUIRES: tolerance >= 0.
std::optional<Saturation> FindSaturation(std::vector<AxisPoint> points, double tolerance);

// One phrase for the user, settings written by `format`:
//   "saturates: within 5% of the best (4) from 2"
std::string ExplainSaturation(const Saturation& s,
                              const std::function<std::string(double)>& format);

}  // namespace dljob::advise
