#include "cli/start_estimate_view.h"

#include "base/time_format.h"

namespace dljob {
namespace {

using std::chrono::seconds;

// `d` rounded to the precision an estimate has, as kubectl prints durations.
std::string Approximately(seconds d) {
  const int64_t s = d.count();
  int64_t unit = 60;
  if (s >= 8 * 3600) {
    unit = 3600;
  } else if (s >= 3600) {
    unit = 600;
  }
  return "~" + HumanDuration(seconds(std::max<int64_t>(unit, (s + unit / 2) / unit * unit)));
}

std::optional<seconds> Ahead(const StartEstimateStatus& e,
                             std::chrono::system_clock::time_point now) {
  if (e.time.empty()) return std::nullopt;
  std::optional<WallTime> t = ParseRfc3339(e.time);
  if (!t) return std::nullopt;
  return std::chrono::duration_cast<seconds>(*t - now);
}

}  // namespace

bool IsWaiting(const DLJob& job) {
  return job.status.phase == JobPhase::kQueued || job.status.phase == JobPhase::kUnset;
}

std::string EstimatedStart(const DLJob& job, std::chrono::system_clock::time_point now) {
  if (!IsWaiting(job)) return "-";
  if (!job.status.start_estimate) return "unknown";
  std::optional<seconds> ahead = Ahead(*job.status.start_estimate, now);
  if (!ahead) return "unknown";
  if (*ahead <= seconds(0)) return *ahead >= seconds(-60) ? "now" : "overdue";
  return Approximately(*ahead);
}

std::string EstimateLine(const DLJob& job, std::chrono::system_clock::time_point now) {
  if (!IsWaiting(job) || !job.status.start_estimate) return "";
  const StartEstimateStatus& e = *job.status.start_estimate;
  if (!Ahead(e, now)) {
    // The assumption of an unknown estimate says why ("unknown: nothing running reports …").
    return "Estimated start: " + (e.assumption.empty() ? "unknown" : e.assumption) + "\n";
  }
  std::string line = "Estimated start: " + EstimatedStart(job, now) + " (" + e.time + ")";
  if (!e.assumption.empty()) line += ": " + e.assumption;
  return line + ". An estimate, not a promise.\n";
}

}  // namespace dljob
