#include "http/client.h"

#include <gtest/gtest.h>

#include "http/testing/fake_client.h"

namespace dljob::http {
namespace {

using testing::FakeBodyStream;
using testing::FakeClientState;

TEST(ReadAll, JoinsTheChunksOfAStream) {
  FakeClientState state;
  FakeBodyStream body({"ab", "cd", "e"}, state);
  ClientResult<std::string> all = ReadAll(body);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(*all, "abcde");
  EXPECT_EQ(state.cancels, 0);
}

TEST(ReadAll, StopsAtTheLimitAndCancelsTheRest) {
  FakeClientState state;
  FakeBodyStream body({"abc", "def", "never read"}, state);
  ClientResult<std::string> head = ReadAll(body, 4);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(*head, "abcd");
  EXPECT_EQ(state.cancels, 1);
}

// A stream that fails after one chunk.
class BrokenStream final : public BodyStream {
 public:
  ClientResult<std::optional<std::string>> Read() override {
    if (reads_++ == 0) return std::optional<std::string>("partial");
    return ClientError{Failure::kTransportError, "GET http://h/x: connection reset"};
  }
  void Cancel() override {}

 private:
  int reads_ = 0;
};

TEST(ReadAll, ReturnsTheStreamsError) {
  BrokenStream body;
  ClientResult<std::string> all = ReadAll(body);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().failure, Failure::kTransportError);
  EXPECT_EQ(all.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(all.status().message(), "GET http://h/x: connection reset");
}

}  // namespace
}  // namespace dljob::http
