// Clock: where the controller reads "now".
//
// Every deadline, backoff and timestamp the controller computes comes from an injected Clock, so
// tests run on a FakeClock (testing/fake_clock.h) and are instant and deterministic. Wall time,
// because the times end up in the API as RFC 3339 stamps (startTime, lastTransitionTime).
// Implementations are thread-safe.
#pragma once

#include <chrono>

#include "base/time_format.h"

namespace dljob::controller {

using Duration = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual WallTime Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  WallTime Now() const override { return std::chrono::system_clock::now(); }
};

}  // namespace dljob::controller
