#include "base/status.h"

#include <string>

#include <gtest/gtest.h>

namespace dljob {
namespace {

// An error type richer than a Status, as a layer above base defines one (http::ClientError,
// kube::ApiError).
struct CodedError {
  int code = 0;
  std::string message;
  Status ToStatus() const { return Status::Unavailable(std::to_string(code) + " " + message); }
};

TEST(ResultTest, HoldsAValueOrAStatus) {
  Result<std::string> value = std::string("labels");
  ASSERT_TRUE(value.ok());
  EXPECT_TRUE(value.status().ok());
  EXPECT_EQ(*value, "labels");
  EXPECT_EQ(value->size(), 6u);
  Result<std::string> error = Status::NotFound("\"/d/labels.txt\": no such file");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(error.error().message(), "\"/d/labels.txt\": no such file");
}

TEST(ResultTest, ARicherErrorKeepsItsFieldsAndConvertsToAStatus) {
  Result<int, CodedError> value = 7;
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  EXPECT_TRUE(value.status().ok());
  Result<int, CodedError> error = CodedError{409, "Conflict"};
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().code, 409);
  EXPECT_EQ(error.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(error.status().message(), "409 Conflict");
}

TEST(ResultTest, MovesTheValueOut) {
  Result<std::string> r = std::string(1000, 'x');
  std::string taken = std::move(r).value();
  EXPECT_EQ(taken.size(), 1000u);
}

}  // namespace
}  // namespace dljob
