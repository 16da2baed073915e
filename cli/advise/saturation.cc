#include "cli/advise/saturation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dljob::advise {

const char* ShapeName(CurveShape shape) {
  switch (shape) {
    case CurveShape::kSingle:
      return "single";
    case CurveShape::kFlat:
      return "flat";
    case CurveShape::kSaturates:
      return "saturates";
    case CurveShape::kStillRising:
      return "still rising";
    case CurveShape::kFalls:
      return "falls";
  }
  return "?";
}

std::optional<Saturation> FindSaturation(std::vector<AxisPoint> points, double tolerance) {
  std::sort(points.begin(), points.end(),
            [](const AxisPoint& a, const AxisPoint& b) { return a.setting < b.setting; });
  double highest_failed = -INFINITY;
  for (const AxisPoint& p : points) {
    if (!p.ok) highest_failed = std::max(highest_failed, p.setting);
  }
  std::vector<AxisPoint> candidates;
  double max_noise = 0;
  for (const AxisPoint& p : points) {
    if (p.ok && p.setting > highest_failed && std::isfinite(p.value)) {
      candidates.push_back(p);
      max_noise = std::max(max_noise, p.noise);
    }
  }
  if (candidates.empty()) return std::nullopt;

  Saturation s;
  if (std::isfinite(highest_failed)) s.highest_failed = highest_failed;
  s.band = std::max(tolerance, 2 * max_noise);
  const auto best =
      std::max_element(candidates.begin(), candidates.end(),
                       [](const AxisPoint& a, const AxisPoint& b) { return a.value < b.value; });
  s.best = best->setting;
  s.best_value = best->value;
  const double floor = best->value * (1 - s.band);
  size_t chosen = 0;
  while (candidates[chosen].value < floor) ++chosen;  // ends at best at the latest
  s.chosen = candidates[chosen].setting;
  s.chosen_value = candidates[chosen].value;

  const bool all_in_band = std::all_of(candidates.begin(), candidates.end(),
                                       [&](const AxisPoint& p) { return p.value >= floor; });
  if (candidates.size() == 1) {
    s.shape = CurveShape::kSingle;
  } else if (all_in_band) {
    s.shape = CurveShape::kFlat;
  } else if (candidates.back().value < floor) {
    s.shape = CurveShape::kFalls;
  } else if (chosen + 1 == candidates.size()) {
    s.shape = CurveShape::kStillRising;  // the previous point is below the band (not flat)
  } else {
    s.shape = CurveShape::kSaturates;
  }
  return s;
}

static std::string ExplainShape(const Saturation& s,
                                const std::function<std::string(double)>& format) {
  char band[32];
  std::snprintf(band, sizeof band, "%.0f%%", s.band * 100);
  const std::string chosen = format(s.chosen), best = format(s.best);
  switch (s.shape) {
    case CurveShape::kSingle:
      return s.highest_failed ? "only " + chosen + " succeeded"
                              : "one setting tried (" + chosen + ")";
    case CurveShape::kFlat:
      return std::string("flat: every setting within ") + band + " of the best; the least (" +
             chosen + ") is enough";
    case CurveShape::kStillRising:
      return std::string("still rising at the largest setting tried (") + chosen +
             "); try larger ones";
    case CurveShape::kFalls:
      return std::string("falls past the best (") + best + "); within " + band + " of it from " +
             chosen;
    case CurveShape::kSaturates:
      return std::string("saturates: within ") + band + " of the best (" + best + ") from " +
             chosen;
  }
  return "";
}

std::string ExplainSaturation(const Saturation& s,
                              const std::function<std::string(double)>& format) {
  std::string text = ExplainShape(s, format);
  if (s.highest_failed) text += "; " + format(*s.highest_failed) + " and below failed";
  return text;
}

}  // namespace dljob::advise
