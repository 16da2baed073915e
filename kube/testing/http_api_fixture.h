// HttpApiTest: the fixture of HttpApi's tests — an HttpApi over a scripted http::testing::
// FakeClient (http/testing/fake_client.h) and a FakeClock, unlimited rate and no jitter unless a
// test asks. The test scripts state_.answers, then reads state_.requests (Sent()) and the clock's
// sleeps. StatusAnswer() scripts an API server's error answer (a metav1.Status body). Test-only;
// not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"
#include "http/testing/fake_client.h"
#include "kube/http_api.h"

namespace dljob::kube::testing {

using http::testing::ChunkedAnswer;
using http::testing::FailedAnswer;
using http::testing::FakeAnswer;
using http::testing::OkAnswer;
using std::chrono::milliseconds;

// An API server's answer with status `code`: a metav1.Status body with `reason`.
inline FakeAnswer StatusAnswer(int code, const std::string& reason,
                               http::HttpHeaders headers = {}) {
  Json s = {{"kind", "Status"},    {"apiVersion", "v1"},
            {"status", "Failure"}, {"message", "m" + std::to_string(code)},
            {"reason", reason},    {"code", code}};
  FakeAnswer a = OkAnswer(s.dump());
  a.status = code;
  a.headers = std::move(headers);
  return a;
}

class RotatingTokens : public TokenSource {
 public:
  Result<std::string> Token() override { return "tok" + std::to_string(++n_); }

 private:
  int n_ = 0;
};

// Hands out "gen1", "gen2", …: a new token once the current one is invalidated (as a credential
// plugin run again would), or fails while `failure` is set. Records what was invalidated.
class RefreshingTokens : public TokenSource {
 public:
  Result<std::string> Token() override {
    if (!failure.empty()) return Status::Unavailable(failure);
    return "gen" + std::to_string(gen_);
  }
  void Invalidate(const std::string& token) override {
    invalidated.push_back(token);
    if (token == "gen" + std::to_string(gen_)) ++gen_;
  }

  std::string failure;
  std::vector<std::string> invalidated;

 private:
  int gen_ = 1;
};

class HttpApiTest : public ::testing::Test {
 protected:
  HttpApi& api(ApiOptions options = Options()) {
    return api(std::make_unique<StaticTokenSource>("tok"), options);
  }
  HttpApi& api(TokenSourcePtr tokens, ApiOptions options = Options()) {
    api_ = std::make_unique<HttpApi>(std::make_unique<http::testing::FakeClient>(state_),
                                     std::move(tokens), options, clock_);
    return *api_;
  }
  static ApiOptions Options() {
    ApiOptions o;
    o.qps = 0;  // unlimited unless a test says otherwise
    o.retry.jitter = 0;
    o.retry.initial_backoff = milliseconds(100);
    return o;
  }
  const http::ClientRequest& Sent(size_t i = 0) {
    EXPECT_LT(i, state_.requests.size());
    return state_.requests.at(i);
  }

  http::testing::FakeClientState state_;
  dljob::testing::FakeClock clock_;
  std::unique_ptr<HttpApi> api_;
};

}  // namespace dljob::kube::testing
