// See fake_clock.h.
#include "base/testing/fake_clock.h"

namespace dljob::testing {

WallTime FakeClock::Now() const {
  MutexLock lock(mu_);
  return wall_;
}

Clock::MonotonicTime FakeClock::MonotonicNow() const {
  MutexLock lock(mu_);
  return monotonic_;
}

void FakeClock::SleepFor(Duration d) {
  MutexLock lock(mu_);
  sleeps_.push_back(d);
  if (d <= Duration::zero()) return;
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  monotonic_ += d;
}

void FakeClock::Advance(Duration d) {
  MutexLock lock(mu_);
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  monotonic_ += d;
}

std::vector<Clock::Duration> FakeClock::sleeps() const {
  MutexLock lock(mu_);
  return sleeps_;
}

Clock::Duration FakeClock::total_slept() const {
  MutexLock lock(mu_);
  Duration total{0};
  for (Duration d : sleeps_) total += d;
  return total;
}

}  // namespace dljob::testing
