// HttpApi under a deadline (Api::WithDeadline): every attempt fitted into the time left, the
// server told it (`timeout`), no attempt, backoff or rate-limiter wait reaching past it. Over the
// scripted FakeClient, with a FakeClock that a slow server moves on.
#include <gtest/gtest.h>

#include "kube/http_api.h"
#include "kube/testing/http_api_fixture.h"

namespace dljob::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::HttpApiTest;
using testing::OkAnswer;
using testing::StatusAnswer;

// A server that takes `latency` (of the FakeClock) to answer each request.
class SlowClient final : public http::Client {
 public:
  SlowClient(http::testing::FakeClientState& state, dljob::testing::FakeClock& clock,
             Clock::Duration latency)
      : fake_(state), clock_(clock), latency_(latency) {}
  http::ClientResult<http::ClientResponse> Send(const http::ClientRequest& request) override {
    clock_.Advance(latency_);
    return fake_.Send(request);
  }
  http::ClientResult<http::StreamedResponse> Open(const http::ClientRequest& request) override {
    clock_.Advance(latency_);
    return fake_.Open(request);
  }

 private:
  http::testing::FakeClient fake_;
  dljob::testing::FakeClock& clock_;
  const Clock::Duration latency_;
};

class HttpApiDeadlineTest : public HttpApiTest {
 protected:
  // An HttpApi whose server answers each request after `latency`.
  HttpApi& SlowApi(Clock::Duration latency, ApiOptions options = Options()) {
    api_ = std::make_unique<HttpApi>(std::make_unique<SlowClient>(state_, clock_, latency),
                                     std::make_unique<StaticTokenSource>("tok"), options, clock_);
    return *api_;
  }
  Clock::MonotonicTime In(Clock::Duration d) { return clock_.MonotonicNow() + d; }
};

TEST_F(HttpApiDeadlineTest, EachAttemptGetsTheTimeLeftAndTheServerIsToldIt) {
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"),
                    StatusAnswer(503, "ServiceUnavailable"), OkAnswer(R"({"kind":"Pod"})")};
  std::unique_ptr<Api> bounded = SlowApi(seconds(1)).WithDeadline(In(seconds(5)));
  ApiResult<Json> pod = bounded->Get(resources::kPods, "a", "p");
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  // Attempts at 0 s, 1.1 s (after 1 s in the server and a 100 ms backoff) and 2.3 s.
  ASSERT_EQ(state_.requests.size(), 3u);
  const std::pair<const char*, milliseconds> want[] = {
      {"/api/v1/namespaces/a/pods/p?timeout=5000ms", milliseconds(5000)},
      {"/api/v1/namespaces/a/pods/p?timeout=3900ms", milliseconds(3900)},
      {"/api/v1/namespaces/a/pods/p?timeout=2700ms", milliseconds(2700)},
  };
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(Sent(i).target, want[i].first);
    EXPECT_EQ(Sent(i).total_timeout, want[i].second);
    EXPECT_EQ(Sent(i).timeout, milliseconds(30'000)) << "the inactivity limit (the pool's key)";
  }
}

TEST_F(HttpApiDeadlineTest, TheTimeoutJoinsAnExistingQueryAndAViewOfAViewKeepsTheEarlier) {
  state_.answers = {OkAnswer(R"({"items":[]})"), OkAnswer(R"({"items":[]})")};
  HttpApi& api = SlowApi(Clock::Duration::zero());
  std::unique_ptr<Api> outer = api.WithDeadline(In(seconds(2)));
  std::unique_ptr<Api> inner = outer->WithDeadline(In(seconds(9)));
  ListOptions o;
  o.label_selector = "a=b";
  ASSERT_TRUE(inner->List(resources::kPods, "ns", o).ok());
  ASSERT_TRUE(api.List(resources::kPods, "ns", o).ok());  // the Api itself stays unbounded
  EXPECT_EQ(Sent(0).target, "/api/v1/namespaces/ns/pods?labelSelector=a%3Db&timeout=2000ms");
  EXPECT_EQ(Sent(1).target, "/api/v1/namespaces/ns/pods?labelSelector=a%3Db");
  EXPECT_EQ(Sent(1).total_timeout, milliseconds(0));
}

TEST_F(HttpApiDeadlineTest, NoAttemptStartsAtOrAfterTheDeadline) {
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"), OkAnswer("{}")};
  HttpApi& api = SlowApi(seconds(2));
  ApiResult<Json> late =
      api.WithDeadline(In(Clock::Duration::zero()))->Get(resources::kPods, "a", "p");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().http, 0);
  EXPECT_EQ(late.error().reason, kReasonDeadline);
  EXPECT_EQ(late.error().ToString(), "GET /api/v1/namespaces/a/pods/p: its deadline has passed");
  EXPECT_TRUE(state_.requests.empty());

  // The first attempt uses up the second the call had: the 503 is the answer, with no retry.
  ApiResult<Json> pod = api.WithDeadline(In(seconds(1)))->Get(resources::kPods, "a", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().http, 503);
  EXPECT_EQ(state_.requests.size(), 1u);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(HttpApiDeadlineTest, ABackoffThatWouldReachTheDeadlineEndsTheRetries) {
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"),
                    StatusAnswer(503, "ServiceUnavailable"), OkAnswer("{}")};
  HttpApi& api = SlowApi(Clock::Duration::zero());
  ApiResult<Json> r = api.WithDeadline(In(milliseconds(250)))->Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 503);
  EXPECT_EQ(state_.requests.size(), 2u);  // the 200 ms backoff after the second would reach it
  EXPECT_EQ(clock_.sleeps(), std::vector<Clock::Duration>{milliseconds(100)});

  // A Retry-After the deadline cannot wait for ends them too, with no sleep at all (the one
  // sleep so far is the first part's).
  state_.answers = {StatusAnswer(429, "TooManyRequests", {{"Retry-After", "2"}}), OkAnswer("{}")};
  state_.requests.clear();
  r = api.WithDeadline(In(seconds(1)))->Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 429);
  EXPECT_EQ(state_.requests.size(), 1u);
  EXPECT_EQ(clock_.sleeps().size(), 1u);
}

TEST_F(HttpApiDeadlineTest, ARateLimiterWaitThatWouldReachTheDeadlineSendsNothing) {
  state_.answers = {OkAnswer("{}"), OkAnswer("{}")};
  ApiOptions o = Options();
  o.qps = 1;
  o.burst = 1;
  HttpApi& api = SlowApi(Clock::Duration::zero(), o);
  ASSERT_TRUE(api.Get(resources::kPods, "a", "p").ok());  // takes the only token
  ApiResult<Json> r = api.WithDeadline(In(milliseconds(500)))->Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, kReasonDeadline);
  EXPECT_EQ(state_.requests.size(), 1u);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(HttpApiDeadlineTest, AStreamIsBoundedUntilItOpensAndAsksNoServerTimeout) {
  state_.answers = {http::testing::ChunkedAnswer({}), http::testing::ChunkedAnswer({})};
  HttpApi& api = SlowApi(Clock::Duration::zero());
  std::unique_ptr<Api> bounded = api.WithDeadline(In(seconds(3)));
  ASSERT_TRUE(bounded->Watch(resources::kPods, "a", {}).ok());
  LogOptions follow;
  follow.follow = true;
  ASSERT_TRUE(bounded->Logs("a", "p", follow).ok());
  ASSERT_EQ(state_.requests.size(), 2u);
  EXPECT_EQ(Sent(0).target,
            "/api/v1/namespaces/a/pods?watch=true&timeoutSeconds=300&allowWatchBookmarks=true");
  EXPECT_EQ(Sent(0).total_timeout, milliseconds(3000));
  EXPECT_EQ(Sent(0).timeout, seconds(330)) << "events may stream on past the deadline";
  EXPECT_EQ(Sent(1).target, "/api/v1/namespaces/a/pods/p/log?follow=true");
  EXPECT_EQ(Sent(1).total_timeout, milliseconds(3000));
}

}  // namespace
}  // namespace dljob::kube
