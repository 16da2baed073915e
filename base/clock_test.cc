#include "base/clock.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;

TEST(RealClock, ReadsTheSystemAndSteadyClocksAndSleeps) {
  Clock& clock = RealClock();
  EXPECT_EQ(&clock, &RealClock());  // one per process
  const WallTime wall_before = std::chrono::system_clock::now();
  const Clock::MonotonicTime mono_before = std::chrono::steady_clock::now();
  clock.SleepFor(milliseconds(20));
  EXPECT_GE(clock.Now(), wall_before);
  EXPECT_GE(clock.MonotonicNow() - mono_before, milliseconds(20));
  const Clock::MonotonicTime t = clock.MonotonicNow();
  clock.SleepFor(milliseconds(-5));  // returns at once
  clock.SleepFor(Clock::Duration::zero());
  EXPECT_LT(clock.MonotonicNow() - t, seconds(5));
}

TEST(FakeClock, StartsAtFixedPointsWhichOnlyTheTestMoves) {
  FakeClock clock;
  EXPECT_EQ(FormatRfc3339(clock.Now()), "2026-01-02T03:04:05Z");
  EXPECT_EQ(clock.MonotonicNow().time_since_epoch(), std::chrono::hours(1000));
  EXPECT_EQ(clock.Now(), clock.Now());
}

TEST(FakeClock, AdvanceMovesBothTimesAndRecordsNoSleep) {
  FakeClock clock;
  const WallTime wall = clock.Now();
  const Clock::MonotonicTime mono = clock.MonotonicNow();
  clock.Advance(milliseconds(1500));
  EXPECT_EQ(clock.Now() - wall, milliseconds(1500));
  EXPECT_EQ(clock.MonotonicNow() - mono, milliseconds(1500));
  EXPECT_TRUE(clock.sleeps().empty());
  EXPECT_EQ(clock.total_slept(), Clock::Duration::zero());
}

TEST(FakeClock, SleepForRecordsEachSleepAndAdvancesBothTimes) {
  FakeClock clock;
  const WallTime wall = clock.Now();
  const Clock::MonotonicTime mono = clock.MonotonicNow();
  clock.SleepFor(milliseconds(100));
  clock.SleepFor(Clock::Duration::zero());
  clock.SleepFor(milliseconds(-7));  // recorded; time does not go back
  clock.SleepFor(seconds(3));
  EXPECT_EQ(clock.sleeps(),
            (std::vector<Clock::Duration>{milliseconds(100), Clock::Duration::zero(),
                                          milliseconds(-7), seconds(3)}));
  EXPECT_EQ(clock.total_slept(), milliseconds(3093));
  EXPECT_EQ(clock.Now() - wall, milliseconds(3100));
  EXPECT_EQ(clock.MonotonicNow() - mono, milliseconds(3100));
}

TEST(FakeClock, ManyThreadsSleepingLoseNoTime) {
  FakeClock clock;
  const Clock::MonotonicTime start = clock.MonotonicNow();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) clock.SleepFor(milliseconds(1));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(clock.sleeps().size(), 4000u);
  EXPECT_EQ(clock.MonotonicNow() - start, seconds(4));
}

}  // namespace
}  // namespace dljob
