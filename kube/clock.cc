// See clock.h.
#include "kube/clock.h"

#include <thread>

namespace dljob::kube {
namespace {

class SteadyClock : public Clock {
 public:
  TimePoint Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(Duration d) override {
    if (d > Duration::zero()) std::this_thread::sleep_for(d);
  }
};

}  // namespace

Clock& RealClock() {
  static SteadyClock clock;
  return clock;
}

Clock::TimePoint FakeClock::Now() {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

void FakeClock::SleepFor(Duration d) {
  std::lock_guard<std::mutex> lock(mu_);
  sleeps_.push_back(d);
  if (d > Duration::zero()) now_ += d;
}

void FakeClock::Advance(Duration d) {
  std::lock_guard<std::mutex> lock(mu_);
  now_ += d;
}

std::vector<Clock::Duration> FakeClock::sleeps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sleeps_;
}

Clock::Duration FakeClock::total_slept() const {
  std::lock_guard<std::mutex> lock(mu_);
  Duration total{0};
  for (Duration d : sleeps_) total += d;
  return total;
}

}  // namespace dljob::kube
