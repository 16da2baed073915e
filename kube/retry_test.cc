#include "kube/retry.h"

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob::kube {
namespace {

using dljob::testing::FakeClock;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ShouldRetry, Table) {
  struct Case {
    int http;
    const char* reason;
    bool idempotent;
    bool post;
  };
  const Case cases[] = {
      {0, kReasonConnectFailed, true, true},
      {0, kReasonTimeout, true, false},
      {0, kReasonTransportError, true, false},
      {0, kReasonCancelled, false, false},
      {429, "TooManyRequests", true, true},
      {500, "InternalError", true, false},
      {502, "", true, false},
      {503, "ServiceUnavailable", true, false},
      {504, "Timeout", true, false},
      {400, "BadRequest", false, false},
      {401, "Unauthorized", false, false},
      {403, "Forbidden", false, false},
      {404, "NotFound", false, false},
      {409, "Conflict", false, false},
      {409, "AlreadyExists", false, false},
      {410, "Expired", false, false},
      {422, "Invalid", false, false},
  };
  for (const Case& c : cases) {
    ApiError e{c.http, c.reason, "m"};
    EXPECT_EQ(ShouldRetry(Idempotency::kIdempotent, e), c.idempotent) << e.ToString();
    EXPECT_EQ(ShouldRetry(Idempotency::kNonIdempotent, e), c.post) << e.ToString();
  }
}

RetryOptions NoJitter() {
  RetryOptions o;
  o.initial_backoff = milliseconds(100);
  o.max_backoff = milliseconds(1000);
  o.jitter = 0;
  o.max_retry_after = milliseconds(5000);
  return o;
}

TEST(BackoffDelay, DoublesUpToTheCap) {
  RetryOptions o = NoJitter();
  EXPECT_EQ(BackoffDelay(o, 1, std::nullopt, 0.5), milliseconds(100));
  EXPECT_EQ(BackoffDelay(o, 2, std::nullopt, 0.5), milliseconds(200));
  EXPECT_EQ(BackoffDelay(o, 3, std::nullopt, 0.5), milliseconds(400));
  EXPECT_EQ(BackoffDelay(o, 4, std::nullopt, 0.5), milliseconds(800));
  EXPECT_EQ(BackoffDelay(o, 5, std::nullopt, 0.5), milliseconds(1000));
  EXPECT_EQ(BackoffDelay(o, 60, std::nullopt, 0.5), milliseconds(1000));  // no overflow
}

TEST(BackoffDelay, JitterStaysWithinItsBounds) {
  RetryOptions o = NoJitter();
  o.jitter = 0.2;
  EXPECT_EQ(BackoffDelay(o, 1, std::nullopt, 0.0), milliseconds(80));
  EXPECT_EQ(BackoffDelay(o, 1, std::nullopt, 0.5), milliseconds(100));
  EXPECT_LE(BackoffDelay(o, 1, std::nullopt, 0.999999), milliseconds(120));
  EXPECT_GT(BackoffDelay(o, 1, std::nullopt, 0.999999), milliseconds(119));
  Jitter jitter(7);
  for (int i = 0; i < 1000; ++i) {
    double r = jitter.Next();
    ASSERT_GE(r, 0.0);
    ASSERT_LT(r, 1.0);
    Clock::Duration d = BackoffDelay(o, 10, std::nullopt, r);
    ASSERT_GE(d, milliseconds(800));  // the cap, jittered
    ASSERT_LE(d, milliseconds(1200));
  }
}

TEST(BackoffDelay, RetryAfterIsAFloorButCapped) {
  RetryOptions o = NoJitter();
  EXPECT_EQ(BackoffDelay(o, 1, seconds(3), 0.5), seconds(3));
  EXPECT_EQ(BackoffDelay(o, 5, seconds(0), 0.5), milliseconds(1000));  // backoff above the floor
  EXPECT_EQ(BackoffDelay(o, 1, seconds(3600), 0.5), milliseconds(5000));
}

TEST(Jitter, SameSeedSameSequence) {
  Jitter a(42), b(42), c(43);
  double a1 = a.Next();
  EXPECT_EQ(a1, b.Next());
  EXPECT_NE(a1, c.Next());
}

TEST(RateLimiter, BurstThenQpsSpacing) {
  FakeClock clock;
  RateLimiter limiter(/*qps=*/4, /*burst=*/3, clock);
  for (int i = 0; i < 3; ++i) limiter.Wait();
  EXPECT_TRUE(clock.sleeps().empty());
  for (int i = 0; i < 4; ++i) limiter.Wait();
  ASSERT_EQ(clock.sleeps().size(), 4u);
  for (Clock::Duration d : clock.sleeps()) EXPECT_EQ(d, milliseconds(250));
}

TEST(RateLimiter, RefillsWhileIdleUpToBurst) {
  FakeClock clock;
  RateLimiter limiter(2, 2, clock);
  limiter.Wait();
  limiter.Wait();
  clock.Advance(seconds(100));  // refills to 2, not 200
  limiter.Wait();
  limiter.Wait();
  EXPECT_TRUE(clock.sleeps().empty());
  limiter.Wait();
  ASSERT_EQ(clock.sleeps().size(), 1u);
  EXPECT_EQ(clock.sleeps()[0], milliseconds(500));
}

TEST(RateLimiter, ReservationsQueueUpForConcurrentCallers) {
  FakeClock clock;
  RateLimiter limiter(10, 1, clock);
  EXPECT_EQ(limiter.Reserve(), Clock::Duration::zero());
  // Three callers at the same instant are promised consecutive tokens.
  EXPECT_EQ(limiter.Reserve(), milliseconds(100));
  EXPECT_EQ(limiter.Reserve(), milliseconds(200));
  EXPECT_EQ(limiter.Reserve(), milliseconds(300));
  clock.Advance(milliseconds(300));
  EXPECT_EQ(limiter.Reserve(), milliseconds(100));
}

TEST(RateLimiter, DisabledAndTinyBurst) {
  FakeClock clock;
  RateLimiter off(0, 0, clock);
  for (int i = 0; i < 100; ++i) off.Wait();
  EXPECT_TRUE(clock.sleeps().empty());
  RateLimiter one(1, 0, clock);  // burst 0 means 1
  one.Wait();
  one.Wait();
  ASSERT_EQ(clock.sleeps().size(), 1u);
  EXPECT_EQ(clock.sleeps()[0], seconds(1));
}

TEST(RetryOnConflict, RetriesOnlyConflicts) {
  int calls = 0;
  auto result = RetryOnConflict([&]() -> ApiResult<int> {
    ++calls;
    if (calls < 3) return ApiError{409, "Conflict", "stale"};
    return calls;
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, 3);

  calls = 0;
  auto not_found = RetryOnConflict([&]() -> ApiResult<int> {
    ++calls;
    return ApiError{404, "NotFound", "gone"};
  });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(not_found.error().IsNotFound());

  calls = 0;
  auto exhausted = RetryOnConflict(
      [&]() -> ApiResult<int> {
        ++calls;
        return ApiError{409, "Conflict", "stale"};
      },
      4);
  EXPECT_EQ(calls, 4);
  EXPECT_TRUE(exhausted.error().IsConflict());
}

}  // namespace
}  // namespace dljob::kube
