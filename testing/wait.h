// Waiting in tests for what another thread or process does: poll a condition until it holds or a
// time limit passes. The one set of such loops for every test (unit tests with worker threads,
// the end-to-end tests with their processes), so no test writes its own.
//
// These wait on real time on purpose: what they wait for (a thread, a child process, a server)
// runs on the real clock, outside the test's control. Code under test that reads the time takes a
// Clock (base/clock.h) and is driven by testing::FakeClock instead; these helpers only watch it.
// A wait that runs out returns false, so a hang becomes a failed assertion rather than a stuck
// test. Thread-safe (they hold no state).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace dljob::testing {

// Polls `predicate` every `poll_ms` for up to `timeout_ms`; whether it became true (it is asked
// once more at the end, so a slow machine that passes the limit still sees a late success).
bool WaitFor(const std::function<bool()>& predicate, int timeout_ms, int poll_ms = 100);

// For liveness only, never a claim about timing: polls `done` every millisecond for up to 20 s,
// long enough that only a hang runs out.
bool Eventually(const std::function<bool()>& done);

// Runs `step` on a thread of its own, again and again with `pause` between, beside a test (a
// sampler, a workload that keeps talking) until Stop() or destruction, which wait for the step
// under way to finish. Thread-safe.
class Repeating {
 public:
  Repeating(std::function<void()> step, std::chrono::milliseconds pause);
  ~Repeating() { Stop(); }
  Repeating(const Repeating&) = delete;
  Repeating& operator=(const Repeating&) = delete;
  void Stop();

 private:
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace dljob::testing
