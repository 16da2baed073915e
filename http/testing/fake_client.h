// FakeClient: a scripted Client (http/client.h) for tests of code built on it. Test-only.
//
// It records every ClientRequest in its FakeClientState and answers from the state's script of
// FakeAnswers, in order: a status with headers and body chunks (Send() joins them; Open() hands
// them out one Read() at a time), or a ClientError. A request with no answer left fails the test
// and gets a kTransportError. The state outlives the client (tests keep it and hand the client
// to the code under test). Not thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "http/client.h"

namespace dljob::http::testing {

// One scripted answer: a transport failure, or a status with body chunks.
struct FakeAnswer {
  int status = 200;
  std::vector<std::string> chunks;
  HttpHeaders headers;
  std::optional<ClientError> error;
};

inline FakeAnswer ChunkedAnswer(std::vector<std::string> chunks) {
  FakeAnswer a;
  a.chunks = std::move(chunks);
  return a;
}
inline FakeAnswer OkAnswer(const std::string& body) { return ChunkedAnswer({body}); }
inline FakeAnswer FailedAnswer(Failure failure) {
  FakeAnswer a;
  a.error = ClientError{failure, "no answer"};
  return a;
}

struct FakeClientState {
  std::vector<ClientRequest> requests;  // every request, in order
  std::deque<FakeAnswer> answers;       // the script, consumed front first
  int cancels = 0;                      // BodyStream::Cancel() calls
};

class FakeBodyStream final : public BodyStream {
 public:
  FakeBodyStream(std::vector<std::string> chunks, FakeClientState& state)
      : chunks_(chunks.begin(), chunks.end()), state_(state) {}
  ClientResult<std::optional<std::string>> Read() override {
    if (chunks_.empty()) return std::optional<std::string>();
    std::string c = std::move(chunks_.front());
    chunks_.pop_front();
    return std::optional<std::string>(std::move(c));
  }
  void Cancel() override { ++state_.cancels; }

 private:
  std::deque<std::string> chunks_;
  FakeClientState& state_;
};

class FakeClient final : public Client {
 public:
  explicit FakeClient(FakeClientState& state) : s_(state) {}

  ClientResult<ClientResponse> Send(const ClientRequest& request) override {
    FakeAnswer a = Next(request);
    if (a.error) return *a.error;
    std::string body;
    for (const std::string& c : a.chunks) body += c;
    return ClientResponse{a.status, a.headers, body};
  }
  ClientResult<StreamedResponse> Open(const ClientRequest& request) override {
    FakeAnswer a = Next(request);
    if (a.error) return *a.error;
    return StreamedResponse{a.status, a.headers, std::make_unique<FakeBodyStream>(a.chunks, s_)};
  }

 private:
  FakeAnswer Next(const ClientRequest& request) {
    s_.requests.push_back(request);
    EXPECT_FALSE(s_.answers.empty()) << "unexpected " << request.method << " " << request.target;
    if (s_.answers.empty()) return FailedAnswer(Failure::kTransportError);
    FakeAnswer a = std::move(s_.answers.front());
    s_.answers.pop_front();
    return a;
  }

  FakeClientState& s_;
};

}  // namespace dljob::http::testing
