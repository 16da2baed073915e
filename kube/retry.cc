// See retry.h.
#include "kube/retry.h"

#include <algorithm>
#include <cmath>

namespace dljob::kube {

bool ShouldRetry(Idempotency idempotency, const ApiError& error) {
  if (error.http == 0 && error.reason == kReasonCancelled) return false;
  if (idempotency == Idempotency::kIdempotent) return error.IsRetryable();
  return error.http == 429 || (error.http == 0 && error.reason == kReasonConnectFailed);
}

Clock::Duration BackoffDelay(const RetryOptions& options, int retry,
                             std::optional<std::chrono::seconds> retry_after, double unit_random) {
  using Ms = std::chrono::duration<double, std::milli>;
  double base = static_cast<double>(options.initial_backoff.count()) *
                std::pow(2.0, std::clamp(retry - 1, 0, 30));
  base = std::min(base, static_cast<double>(options.max_backoff.count()));
  double factor = 1.0 + options.jitter * (2.0 * unit_random - 1.0);
  auto delay = std::chrono::round<Clock::Duration>(Ms(base * factor));
  if (retry_after) {
    auto floor = std::min<Clock::Duration>(*retry_after, options.max_retry_after);
    delay = std::max(delay, floor);
  }
  return std::max(delay, Clock::Duration::zero());
}

double Jitter::Next() {
  MutexLock lock(mu_);
  return Uniform01(rng_);
}

RateLimiter::RateLimiter(double qps, int burst, Clock& clock)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(clock),
      tokens_(burst_),
      last_(clock.MonotonicNow()) {}

Clock::Duration RateLimiter::Reserve() {
  if (qps_ <= 0) return Clock::Duration::zero();
  MutexLock lock(mu_);
  Clock::MonotonicTime now = clock_.MonotonicNow();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::round<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

void RateLimiter::Wait() {
  Clock::Duration wait = Reserve();
  if (wait > Clock::Duration::zero()) clock_.SleepFor(wait);
}

}  // namespace dljob::kube
