#include "cli/start_estimate_view.h"

#include <gtest/gtest.h>

#include "base/time_format.h"

namespace dljob {
namespace {

auto Now() { return *ParseRfc3339("2026-11-22T05:00:00Z"); }

DLJob Waiting(const std::string& time, const std::string& basis = "Progress",
              const std::string& assumption =
                  "when train-a ends in about 12 min, from its steps "
                  "and images/sec") {
  DLJob job;
  job.metadata.name = "big";
  job.status.phase = JobPhase::kQueued;
  job.status.start_estimate = StartEstimateStatus{time, basis, assumption};
  return job;
}

TEST(EstimatedStart, RoundedAsAnEstimateDeserves) {
  const std::pair<const char*, const char*> cases[] = {
      {"2026-11-22T05:00:20Z", "~1m"},    {"2026-11-22T05:01:29Z", "~1m"},
      {"2026-11-22T05:01:30Z", "~2m"},    {"2026-11-22T05:12:20Z", "~12m"},
      {"2026-11-22T05:59:40Z", "~1h"},    {"2026-11-22T06:34:00Z", "~1h30m"},
      {"2026-11-22T06:36:00Z", "~1h40m"}, {"2026-11-22T13:20:00Z", "~8h"},
      {"2026-11-24T07:40:00Z", "~2d3h"},  {"2026-11-22T05:00:00Z", "now"},
      {"2026-11-22T04:59:00Z", "now"},    {"2026-11-22T04:58:59Z", "overdue"},
  };
  for (const auto& [time, cell] : cases) {
    EXPECT_EQ(EstimatedStart(Waiting(time), Now()), cell) << time;
  }
}

TEST(EstimatedStart, UnknownOrNotWaiting) {
  EXPECT_EQ(
      EstimatedStart(Waiting("", "Unknown", "unknown: nothing running reports progress"), Now()),
      "unknown");
  EXPECT_EQ(EstimatedStart(Waiting("yesterday"), Now()), "unknown");
  DLJob none = Waiting("2026-11-22T05:12:20Z");
  none.status.start_estimate.reset();
  EXPECT_EQ(EstimatedStart(none, Now()), "unknown");
  DLJob fresh = Waiting("2026-11-22T05:12:20Z");
  fresh.status.phase = JobPhase::kUnset;  // no status yet: it waits too
  EXPECT_EQ(EstimatedStart(fresh, Now()), "~12m");
  for (JobPhase p :
       {JobPhase::kScheduled, JobPhase::kRunning, JobPhase::kSucceeded, JobPhase::kSuspended}) {
    DLJob job = Waiting("2026-11-22T05:12:20Z");
    job.status.phase = p;
    EXPECT_EQ(EstimatedStart(job, Now()), "-") << PhaseName(p);
    EXPECT_EQ(EstimateLine(job, Now()), "") << PhaseName(p);
  }
}

TEST(EstimateLine, TheTimeAndTheAssumptionNeverAPromise) {
  EXPECT_EQ(EstimateLine(Waiting("2026-11-22T05:12:20Z"), Now()),
            "Estimated start: ~12m (2026-11-22T05:12:20Z): when train-a ends in about 12 min, "
            "from its steps and images/sec. An estimate, not a promise.\n");
  EXPECT_EQ(EstimateLine(Waiting("", "Unknown",
                                 "unknown: nothing running reports progress or "
                                 "has a time limit"),
                         Now()),
            "Estimated start: unknown: nothing running reports progress or has a time limit\n");
  DLJob none = Waiting("2026-11-22T05:12:20Z");
  none.status.start_estimate.reset();
  EXPECT_EQ(EstimateLine(none, Now()), "");
}

}  // namespace
}  // namespace dljob
