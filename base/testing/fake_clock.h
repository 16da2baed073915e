// FakeClock: a Clock (base/clock.h) whose time moves only when a test says so.
//
// Both readings start at fixed points — wall time at 2026-01-02T03:04:05Z, so expected stamps
// can be written out, and monotonic time at an arbitrary 1000 h — and move together: Advance(d)
// moves both by d, and SleepFor(d) records d and then advances by it instead of blocking, so code
// that backs off or paces itself runs instantly and a test can assert the waits it asked for.
// Thread-safe.
#pragma once

#include <vector>

#include "base/clock.h"
#include "base/mutex.h"

namespace dljob::testing {

class FakeClock final : public Clock {
 public:
  // The wall time a FakeClock starts at: 2026-01-02T03:04:05Z.
  static constexpr std::chrono::seconds kStartUnixSeconds{1767323045};

  WallTime Now() const override;
  MonotonicTime MonotonicNow() const override;
  void SleepFor(Duration d) override;  // records d, then advances by it (d <= 0: records only)

  void Advance(Duration d);  // moves both times without recording a sleep

  std::vector<Duration> sleeps() const;  // every SleepFor() so far, in order
  Duration total_slept() const;

 private:
  mutable Mutex mu_;
  WallTime wall_ GUARDED_BY(mu_) = WallTime(kStartUnixSeconds);
  MonotonicTime monotonic_ GUARDED_BY(mu_) = MonotonicTime(std::chrono::hours(1000));
  std::vector<Duration> sleeps_ GUARDED_BY(mu_);
};

}  // namespace dljob::testing
