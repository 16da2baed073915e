// See clock.h.
#include "base/clock.h"

#include <thread>

namespace dljob {
namespace {

class SystemClock final : public Clock {
 public:
  WallTime Now() const override { return std::chrono::system_clock::now(); }
  MonotonicTime MonotonicNow() const override { return std::chrono::steady_clock::now(); }
  void SleepFor(Duration d) override {
    if (d > Duration::zero()) std::this_thread::sleep_for(d);
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

}  // namespace dljob
