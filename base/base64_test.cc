#include "base/base64.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(Base64Decode, PaddingWhitespaceAndGarbage) {
  EXPECT_EQ(Base64Decode("aGVsbG8="), "hello");
  EXPECT_EQ(Base64Decode("aGVsbG8"), "hello");
  EXPECT_EQ(Base64Decode("aGVs\nbG8=\n"), "hello");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode("+/+/"), std::string("\xfb\xff\xbf"));
  EXPECT_EQ(Base64Decode("aGV*"), std::nullopt);
  EXPECT_EQ(Base64Decode("aG=V"), std::nullopt);
  EXPECT_EQ(Base64Decode("a"), std::nullopt);
}

TEST(Base64Encode, RfcVectorsAndRoundTrips) {
  // RFC 4648 section 10.
  const char* want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  std::string foobar = "foobar";
  for (size_t n = 0; n <= foobar.size(); ++n) {
    EXPECT_EQ(Base64Encode(foobar.substr(0, n)), want[n]);
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (size_t n = 0; n <= all.size(); ++n) {  // every length, every byte value
    std::string in = all.substr(all.size() - n);
    ASSERT_EQ(Base64Decode(Base64Encode(in)), in) << n;
  }
}

}  // namespace
}  // namespace dljob
