// Retries, backoff and client-side rate limiting for the Kubernetes client.
//
// Which failures are retried (RetryDecision):
//   - Idempotent calls (GET, LIST, PUT, PATCH, DELETE, opening a watch or a log): transport
//     failures (http 0), 429 Too Many Requests, and 5xx.
//   - Non-idempotent calls (POST: Create, Bind): only when the server certainly did not act —
//     the connection was never established (reason ConnectFailed) or the answer was 429 (the API
//     server's priority-and-fairness filter rejects before doing anything). Not after a 5xx or a
//     reset connection: the object may exist already, and a blind retry would turn our own
//     success into a confusing 409 AlreadyExists (or, with generateName, a duplicate object). The
//     caller's reconcile loop sees the error and retries from a fresh read instead.
//   - Never: other 4xx (404, 409, 410, 422, …) — retrying cannot change the answer.
// Delays (BackoffDelay): initial_backoff · 2^(retry-1), capped at max_backoff, each multiplied by
// a random factor in [1 - jitter, 1 + jitter]; a Retry-After from the server (capped at
// max_retry_after) is a floor. At most max_attempts attempts in all.
//
// RateLimiter is a token bucket (qps tokens per second, up to `burst` saved up), the same model
// as client-go's default (5 QPS, burst 10). Thread-safe; waits on the injected Clock, outside its
// lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/random.h"
#include "kube/api.h"

namespace dljob::kube {

struct RetryOptions {
  int max_attempts = 5;  // the first try included; 1 = never retry
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10'000};
  double jitter = 0.2;
  std::chrono::milliseconds max_retry_after{60'000};
  uint64_t seed = 1;  // of the jitter's random numbers
};

enum class Idempotency { kIdempotent, kNonIdempotent };

// Whether a call that failed with `error` should be tried again (budget aside).
bool ShouldRetry(Idempotency idempotency, const ApiError& error);

// The wait before retry number `retry` (1 = the first retry). `unit_random` in [0, 1).
Clock::Duration BackoffDelay(const RetryOptions& options, int retry,
                             std::optional<std::chrono::seconds> retry_after, double unit_random);

// Thread-safe source of the jitter's random numbers, seeded.
class Jitter {
 public:
  explicit Jitter(uint64_t seed) : rng_(seed) {}
  double Next();  // uniform in [0, 1)

 private:
  Mutex mu_;
  Rng rng_ GUARDED_BY(mu_);
};

class RateLimiter {
 public:
  // qps <= 0 disables limiting. burst < 1 is treated as 1. The bucket starts full.
  RateLimiter(double qps, int burst, Clock& clock);

  // Takes a token, sleeping on the clock until one is due.
  void Wait();
  // Takes a token and returns how long the caller must wait before using it (no sleeping).
  Clock::Duration Reserve();

 private:
  const double qps_;
  const double burst_;
  Clock& clock_;
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_);  // may go negative: tokens promised to waiting callers
  Clock::MonotonicTime last_ GUARDED_BY(mu_);  // when tokens_ was last brought up to date
};

// Calls fn() until it returns something other than a 409 Conflict, at most `attempts` times.
// fn must re-read the object it updates each time (that is what makes the retry useful).
// fn returns an ApiResult<T>; its last result is returned.
template <typename Fn>
auto RetryOnConflict(Fn&& fn, int attempts = 5) -> decltype(fn()) {
  auto result = fn();
  for (int i = 1; i < attempts && !result.ok() && result.error().IsConflict(); ++i) result = fn();
  return result;
}

}  // namespace dljob::kube
