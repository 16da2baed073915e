// Clock: the time source the Kubernetes client waits on (backoff, rate limiting, token re-reads).
//
// Injected as a reference so tests run instantly on a FakeClock: SleepFor() on a FakeClock moves
// its time forward and records the sleep instead of blocking. RealClock() is the monotonic clock
// of the process (std::chrono::steady_clock) and really sleeps. Both are thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

namespace dljob::kube {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint Now() = 0;
  virtual void SleepFor(Duration d) = 0;
};

// The process's steady clock. Stateless; lives for the whole process.
Clock& RealClock();

// Simulated time: starts at an arbitrary fixed point; only Advance() and SleepFor() move it.
class FakeClock : public Clock {
 public:
  TimePoint Now() override;
  void SleepFor(Duration d) override;  // advances time by d and records d
  void Advance(Duration d);            // advances without recording a sleep

  std::vector<Duration> sleeps() const;  // every SleepFor() so far, in order
  Duration total_slept() const;

 private:
  mutable std::mutex mu_;
  TimePoint now_ = TimePoint(std::chrono::hours(1000));
  std::vector<Duration> sleeps_;
};

}  // namespace dljob::kube
