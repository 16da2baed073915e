// FakeClock: a Clock that moves only when a test says so. Thread-safe.
#pragma once

#include <mutex>

#include "operator/controller/clock.h"

namespace dljob::controller::testing {

class FakeClock final : public Clock {
 public:
  // 2026-01-02T03:04:05Z: a fixed, readable start so expected stamps can be written out.
  FakeClock() : now_(std::chrono::sys_seconds{std::chrono::seconds{1767323045}}) {}

  WallTime Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void Advance(std::chrono::nanoseconds d) {
    std::lock_guard lock(mu_);
    now_ += std::chrono::duration_cast<WallTime::duration>(d);
  }

 private:
  mutable std::mutex mu_;
  WallTime now_;
};

}  // namespace dljob::controller::testing
