// Readiness: what a non-blocking reader waits for before it tries again — a descriptor to
// poll(2) and a time by which to try regardless (its inactivity limit, or a retry for a source
// without a descriptor). One reader thread can so wait on many streams (operator/metrics/
// log_collectors.h follows every launcher's log that way).
#pragma once

#include <chrono>

namespace dljob {

struct Readiness {
  using Clock = std::chrono::steady_clock;
  int fd = -1;       // wait for `events` on it; -1: nothing to wait on, only `until`
  short events = 0;  // POLLIN, or POLLOUT (TLS that must write before it can read)
  Clock::time_point until = Clock::time_point::max();  // try again by then in any case
};

}  // namespace dljob
