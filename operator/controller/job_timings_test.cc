#include "operator/controller/job_timings.h"

#include <gtest/gtest.h>

#include "base/time_format.h"
#include "jobs/conditions.h"

namespace dljob::controller {
namespace {

constexpr char kCreated[] = "2026-01-02T03:00:00Z";

WallTime At(int seconds_after_creation) {
  return *ParseRfc3339(kCreated) + std::chrono::seconds(seconds_after_creation);
}

// A status that went through `phases` in order, one every 10 s from creation, as TransitionTo
// writes them.
DLJobStatus Through(std::initializer_list<JobPhase> phases) {
  DLJobStatus s;
  int t = 0;
  for (JobPhase p : phases) TransitionTo(s, p, "r", "m", FormatRfc3339(At(t += 10)));
  return s;
}

struct Case {
  const char* name;
  DLJobStatus before;
  JobPhase after;
  std::optional<double> start;
  std::optional<double> wait;
};

// Before → after at 100 s after creation.
TEST(JobTimings, EachTransitionThatCounts) {
  using P = JobPhase;
  const Case cases[] = {
      {"new job queued", {}, P::kQueued, {}, {}},
      {"bound in its first pass", {}, P::kScheduled, {}, 100},
      {"admitted after queueing from 10 s", Through({P::kQueued}), P::kScheduled, {}, 90},
      {"straight to running", Through({P::kQueued}), P::kRunning, 100, 90},
      {"first running", Through({P::kQueued, P::kScheduled}), P::kRunning, 100, {}},
      {"still running", Through({P::kQueued, P::kScheduled, P::kRunning}), P::kRunning, {}, {}},
      {"queued again after preemption, from 40 s",
       Through({P::kQueued, P::kScheduled, P::kRunning, P::kQueued}),
       P::kScheduled,
       {},
       60},
      {"resumed running is no second start",
       Through({P::kQueued, P::kScheduled, P::kRunning, P::kQueued, P::kScheduled}),
       P::kRunning,
       {},
       {}},
      {"restart is no admission",
       Through({P::kQueued, P::kScheduled, P::kRunning, P::kRestarting}),
       P::kScheduled,
       {},
       {}},
      {"failed while queued", Through({P::kQueued}), P::kFailed, {}, {}},
  };
  for (const Case& c : cases) {
    DLJobStatus after = c.before;
    TransitionTo(after, c.after, "r", "m", FormatRfc3339(At(100)));
    JobTimings t = TimingsOf(kCreated, c.before, after, At(100));
    EXPECT_EQ(t.start_seconds, c.start) << c.name;
    EXPECT_EQ(t.queue_wait_seconds, c.wait) << c.name;
  }
}

TEST(JobTimings, NoCreationTimeNoTimingsAndSkewCountsAsZero) {
  DLJobStatus after;
  TransitionTo(after, JobPhase::kRunning, "r", "m", kCreated);
  EXPECT_TRUE(TimingsOf("", {}, after, At(5)).empty());
  JobTimings t = TimingsOf(kCreated, {}, after, At(-5));
  EXPECT_EQ(t.start_seconds, 0);
  EXPECT_EQ(t.queue_wait_seconds, 0);
}

}  // namespace
}  // namespace dljob::controller
