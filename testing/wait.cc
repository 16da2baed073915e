#include "testing/wait.h"

#include <chrono>
#include <thread>

namespace dljob::testing {

bool WaitFor(const std::function<bool()>& predicate, int timeout_ms, int poll_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return predicate();
}

bool Eventually(const std::function<bool()>& done) { return WaitFor(done, 20'000, 1); }

Repeating::Repeating(std::function<void()> step, std::chrono::milliseconds pause)
    : thread_([this, step = std::move(step), pause] {
        while (running_) {
          step();
          std::this_thread::sleep_for(pause);
        }
      }) {}

void Repeating::Stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

}  // namespace dljob::testing
