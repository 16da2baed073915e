#include "storage/crc32c.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dljob::storage {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Crc32cTest, KnownVectors) {
  // RFC 3720 (iSCSI) B.4 and the classic check value.
  EXPECT_EQ(Crc32c(Bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(Crc32c(std::vector<uint8_t>(32, 0)), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::vector<uint8_t>(32, 0xFF)), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(std::span<const uint8_t>()), 0u);
}

TEST(Crc32cTest, FastPathMatchesPortableOracle) {
  std::mt19937_64 rng(7);
  for (size_t n : {0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 1000, 4097}) {
    std::vector<uint8_t> data(n);
    for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
    EXPECT_EQ(Crc32c(data), Crc32cPortable(0, data)) << "n=" << n;
  }
}

TEST(Crc32cTest, ExtendsIncrementally) {
  std::string a = "hello, ", b = "record shards";
  EXPECT_EQ(Crc32c(Crc32c(Bytes(a)), Bytes(b)), Crc32c(Bytes(a + b)));
}

}  // namespace
}  // namespace dljob::storage
