// Sleeps that a std::stop_token ends early: for threads that wait between rounds of work and must
// stop promptly (a request_stop() wakes them at once). Real time: what a test should control goes
// through base/clock.h's Clock instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <stop_token>

#include "base/mutex.h"

namespace dljob {

// Waits until `until`, or until `stop` is requested; true when it was not stopped.
inline bool SleepUntilUnlessStopped(std::stop_token stop,
                                    std::chrono::steady_clock::time_point until) {
  Mutex mu;  // guards nothing: wait_until needs a lock to release
  std::condition_variable_any cv;
  MutexLock lock(mu);
  cv.wait_until(mu, stop, until, [] { return false; });
  return !stop.stop_requested();
}

// Waits `d`, or until `stop` is requested; true when it was not stopped.
inline bool SleepUnlessStopped(std::stop_token stop, std::chrono::steady_clock::duration d) {
  return SleepUntilUnlessStopped(std::move(stop), std::chrono::steady_clock::now() + d);
}

}  // namespace dljob
