// Clock: the one source of time in dljob, injected wherever code reads the time or waits.
//
// Two readings, because they answer different questions (as Envoy's TimeSource has them):
// Now() is wall time, for instants that leave the process (RFC 3339 stamps in the API such as
// startTime and lastTransitionTime) and for deadlines computed from them; MonotonicNow() never
// jumps, for measuring intervals (rate limiting, how old a cached token is). SleepFor() waits.
//
// Code takes a Clock by reference from its constructor and never reads std::chrono clocks
// itself, so tests run on testing::FakeClock (base/testing/fake_clock.h), where time moves only
// when the test says and SleepFor() returns at once. RealClock() is the process's clock (system
// and steady clocks; it really sleeps); it is stateless and lives for the whole process.
//
// Thread-safety: implementations are safe to call from many threads at once.
#pragma once

#include <chrono>

#include "base/time_format.h"

namespace dljob {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using MonotonicTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;

  virtual WallTime Now() const = 0;
  virtual MonotonicTime MonotonicNow() const = 0;
  // Returns after `d` has passed (at once when d <= 0).
  virtual void SleepFor(Duration d) = 0;
};

// The process's clock: std::chrono::system_clock and steady_clock; SleepFor really sleeps.
Clock& RealClock();

}  // namespace dljob
