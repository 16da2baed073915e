#include "jobs/quantity.h"

#include <gtest/gtest.h>

namespace dljob {
namespace {

TEST(MultiplyQuantity, KeepsTheUnitWhenWhole) {
  EXPECT_EQ(*MultiplyQuantity("8", 8), "64");
  EXPECT_EQ(*MultiplyQuantity("60Gi", 8), "480Gi");
  EXPECT_EQ(*MultiplyQuantity("500m", 8), "4000m");
  EXPECT_EQ(*MultiplyQuantity("2k", 3), "6k");
  EXPECT_EQ(*MultiplyQuantity("1Gi", 0), "0Gi");
}

TEST(MultiplyQuantity, StepsDownToAWholeSmallerUnit) {
  EXPECT_EQ(*MultiplyQuantity("1.5", 3), "4500m");
  EXPECT_EQ(*MultiplyQuantity("1.5Gi", 3), "4608Mi");
  EXPECT_EQ(*MultiplyQuantity("0.5", 2), "1");
  EXPECT_EQ(*MultiplyQuantity("1.25G", 2), "2500M");
}

TEST(MultiplyQuantity, RejectsWhatItCannotComputeExactly) {
  for (const char* bad : {"", "abc", "1e3", "-1", "8x", ".", "1.5Zi"}) {
    EXPECT_FALSE(MultiplyQuantity(bad, 2).ok()) << bad;
  }
  EXPECT_FALSE(MultiplyQuantity("0.0001", 1).ok());  // below a milli
  EXPECT_FALSE(MultiplyQuantity("1", -1).ok());
}

TEST(QuantityMilli, CountsThousandthsOfTheBaseUnitRoundedUp) {
  const struct {
    const char* quantity;
    int64_t milli;
  } cases[] = {
      {"0", 0},
      {"500m", 500},
      {"2", 2000},
      {"1.5", 1500},
      {"0.1m", 1},  // rounded up, as Kubernetes rounds requests
      {"1k", 1000000},
      {"1Ki", 1024000},
      {"60Gi", 60LL * 1024 * 1024 * 1024 * 1000},
      {"1.5Gi", 1536LL * 1024 * 1024 * 1000},
      {"100M", 100000000000},
      {"1Pi", 1125899906842624000},
      {"8", 8000},
  };
  for (const auto& c : cases) {
    Result<int64_t> got = QuantityMilli(c.quantity);
    ASSERT_TRUE(got.ok()) << c.quantity << ": " << got.status().message();
    EXPECT_EQ(*got, c.milli) << c.quantity;
  }
  for (const char* bad : {"", "abc", "1e3", "-1", "8x", ".", "1.5Zi", "8Ei", "10000Pi"}) {
    EXPECT_FALSE(QuantityMilli(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace dljob
