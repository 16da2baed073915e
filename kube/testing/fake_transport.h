// FakeTransport: an in-memory Transport for HttpApi tests. Test-only.
//
// It records every Request and answers from a script (FakeState::answers, in order): a status
// with body chunks (Open() hands the chunks out one Read() at a time), or a transport error.
// HttpApiTest is the fixture: an HttpApi over a FakeTransport and a FakeClock, unlimited rate and
// no jitter unless a test asks. Not thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kube/http_api.h"

namespace dljob::kube::testing {

using std::chrono::milliseconds;

// One scripted answer of the fake transport: a transport error, or a status with body chunks.
struct Answer {
  int status = 200;
  std::vector<std::string> chunks;
  Headers headers;
  std::optional<ApiError> error;
};
inline Answer Stream(std::vector<std::string> chunks) {
  Answer a;
  a.chunks = std::move(chunks);
  return a;
}
inline Answer Ok(const std::string& body) { return Stream({body}); }
inline Answer StatusAnswer(int code, const std::string& reason, Headers headers = {}) {
  Json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
            {"message", "m" + std::to_string(code)}, {"reason", reason}, {"code", code}};
  Answer a = Stream({s.dump()});
  a.status = code;
  a.headers = std::move(headers);
  return a;
}
inline Answer Fail(const char* reason) {
  Answer a;
  a.error = ApiError{0, reason, "no answer"};
  return a;
}

struct FakeState {
  std::vector<Request> requests;
  std::deque<Answer> answers;
  int cancels = 0;
};

class FakeBody : public BodyStream {
 public:
  FakeBody(std::vector<std::string> chunks, FakeState& state)
      : chunks_(chunks.begin(), chunks.end()), state_(state) {}
  ApiResult<std::optional<std::string>> Read() override {
    if (chunks_.empty()) return std::optional<std::string>();
    std::string c = chunks_.front();
    chunks_.pop_front();
    return std::optional<std::string>(c);
  }
  void Cancel() override { ++state_.cancels; }

 private:
  std::deque<std::string> chunks_;
  FakeState& state_;
};

class FakeTransport : public Transport {
 public:
  explicit FakeTransport(FakeState& s) : s_(s) {}
  ApiResult<Response> Send(const Request& request) override {
    Answer a = Next(request);
    if (a.error) return *a.error;
    std::string body;
    for (const std::string& c : a.chunks) body += c;
    return Response{a.status, a.headers, body};
  }
  ApiResult<StreamResponse> Open(const Request& request) override {
    Answer a = Next(request);
    if (a.error) return *a.error;
    return StreamResponse{a.status, a.headers, std::make_unique<FakeBody>(a.chunks, s_)};
  }

 private:
  Answer Next(const Request& request) {
    s_.requests.push_back(request);
    EXPECT_FALSE(s_.answers.empty()) << "unexpected " << request.method << " "
                                     << request.path_and_query;
    if (s_.answers.empty()) return Fail(kReasonTransportError);
    Answer a = s_.answers.front();
    s_.answers.pop_front();
    return a;
  }
  FakeState& s_;
};

class RotatingTokens : public TokenSource {
 public:
  std::string Token() override { return "tok" + std::to_string(++n_); }

 private:
  int n_ = 0;
};

class HttpApiTest : public ::testing::Test {
 protected:
  HttpApi& api(ApiOptions options = Options()) {
    api_ = std::make_unique<HttpApi>(std::make_unique<FakeTransport>(state_),
                                     std::make_unique<StaticTokenSource>("tok"), options, clock_);
    return *api_;
  }
  static ApiOptions Options() {
    ApiOptions o;
    o.qps = 0;  // unlimited unless a test says otherwise
    o.retry.jitter = 0;
    o.retry.initial_backoff = milliseconds(100);
    return o;
  }
  const Request& Sent(size_t i = 0) {
    EXPECT_LT(i, state_.requests.size());
    return state_.requests.at(i);
  }

  FakeState state_;
  FakeClock clock_;
  std::unique_ptr<HttpApi> api_;
};

}  // namespace dljob::kube::testing
