#include "images/trainer/comm/half.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace dljob::trainer {
namespace {

bool IsNanHalf(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

TEST(HalfTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = HalfToFloat(h);
    if (IsNanHalf(h)) {
      // NaNs come back quiet, with sign and payload.
      ASSERT_TRUE(std::isnan(f)) << std::hex << bits;
      ASSERT_EQ(FloatToHalf(f), h | 0x200u) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << bits;
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(FloatToHalf(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);  // the largest half
  EXPECT_EQ(FloatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // the tie rounds to even: infinity
  EXPECT_EQ(FloatToHalf(1e9f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(IsNanHalf(FloatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(IsNanHalf(FloatToHalf(std::bit_cast<float>(0x7f800001u))));  // payload in low bits
  EXPECT_EQ(FloatToHalf(0x1p-14f), 0x0400);                                // the smallest normal
  EXPECT_EQ(FloatToHalf(0x1p-24f), 0x0001);                                // the smallest subnormal
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000);                                // a tie with zero: even
  EXPECT_EQ(FloatToHalf(0x1.8p-25f), 0x0001);
  EXPECT_EQ(FloatToHalf(0x1.8p-24f), 0x0002);  // 1.5 units: a tie, to even 2
  EXPECT_EQ(FloatToHalf(0x1p-26f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0x1p-30f), 0x8000);
  EXPECT_EQ(FloatToHalf(0x1.ff8p-15f), 0x03ff);  // the largest subnormal
  EXPECT_EQ(FloatToHalf(0x1.ffcp-15f), 0x0400);  // halfway to the smallest normal: to even
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(HalfToFloat(0x8001), -0x1p-24f);
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
}

// Between every pair of neighbouring finite halves: the midpoint (exact in float) rounds to the
// one with an even mantissa, and one float step either side of it rounds to the nearer.
TEST(HalfTest, EveryMidpointRoundsToNearestEven) {
  for (uint32_t bits = 0; bits < 0x7bffu; ++bits) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const auto low = static_cast<uint16_t>(bits | sign);
      const auto high = static_cast<uint16_t>((bits + 1) | sign);
      const float mid = (HalfToFloat(low) + HalfToFloat(high)) / 2;  // exact
      const uint16_t even = (bits & 1u) ? high : low;
      ASSERT_EQ(FloatToHalf(mid), even) << std::hex << bits;
      const float toward_low = std::nextafter(mid, HalfToFloat(low));
      const float toward_high = std::nextafter(mid, HalfToFloat(high));
      ASSERT_EQ(FloatToHalf(toward_low), low) << std::hex << bits;
      ASSERT_EQ(FloatToHalf(toward_high), high) << std::hex << bits;
    }
  }
}

// The bulk forms may use F16C instructions; they must agree bit for bit with the scalar code, for
// every half, and for floats and sums of every kind (a fixed-seed sample of all bit patterns).
TEST(HalfTest, BulkFormsAgreeWithTheScalarOnesEverywhere) {
  std::vector<uint16_t> halves(0x10000);
  for (uint32_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> floats(halves.size());
  HalvesToFloatsScaled(halves.data(), floats.data(), halves.size(), 1.0f);
  for (size_t i = 0; i < halves.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(floats[i]), std::bit_cast<uint32_t>(HalfToFloat(halves[i])))
        << std::hex << i;
  }
  std::mt19937 random(42);
  std::vector<float> sample(1 << 20);
  for (float& f : sample) f = std::bit_cast<float>(static_cast<uint32_t>(random()));
  for (size_t i = 0; i < 0x10000; ++i) sample[i] = floats[i] * 1.0009765625f;  // near halves
  std::vector<uint16_t> converted(sample.size());
  FloatsToHalves(sample.data(), converted.data(), sample.size());
  for (size_t i = 0; i < sample.size(); ++i) {
    ASSERT_EQ(converted[i], FloatToHalf(sample[i]))
        << std::hex << std::bit_cast<uint32_t>(sample[i]);
  }
  std::vector<uint16_t> a(sample.size());
  std::vector<uint16_t> b(sample.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<uint16_t>(random());
    b[i] = static_cast<uint16_t>(random());
  }
  std::vector<uint16_t> sum = b;
  AddHalves(a.data(), sum.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const uint16_t want = FloatToHalf(HalfToFloat(a[i]) + HalfToFloat(b[i]));
    // Which NaN's payload a NaN + NaN keeps depends on operand order, which is not specified.
    if (IsNanHalf(want) && IsNanHalf(a[i]) && IsNanHalf(b[i])) {
      ASSERT_TRUE(IsNanHalf(sum[i]));
      continue;
    }
    ASSERT_EQ(sum[i], want) << std::hex << a[i] << " + " << b[i];
  }
}

TEST(HalfTest, BulkFormsMatchTheScalarOnes) {
  const float in[] = {0.0f, 1.5f, -3.25f, 70000.0f, 0x1p-20f, 0.3f, 1024.5f};
  constexpr size_t n = sizeof(in) / sizeof(in[0]);
  uint16_t halves[n];
  FloatsToHalves(in, halves, n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(halves[i], FloatToHalf(in[i])) << i;
  float out[n];
  HalvesToFloatsScaled(halves, out, n, 0.5f);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], HalfToFloat(halves[i]) * 0.5f) << i;

  // Each sum is done in float and rounded once: 2048 + 1 is a tie in half (spacing 2) -> 2048.
  const uint16_t a[] = {FloatToHalf(1.0f), FloatToHalf(2048.0f), FloatToHalf(60000.0f),
                        FloatToHalf(0.1f)};
  uint16_t b[] = {FloatToHalf(2.0f), FloatToHalf(1.0f), FloatToHalf(10000.0f), FloatToHalf(0.2f)};
  AddHalves(a, b, 4);
  EXPECT_EQ(HalfToFloat(b[0]), 3.0f);
  EXPECT_EQ(HalfToFloat(b[1]), 2048.0f);
  EXPECT_EQ(b[2], 0x7c00);  // overflow: infinity
  EXPECT_EQ(b[3], FloatToHalf(HalfToFloat(FloatToHalf(0.1f)) + HalfToFloat(FloatToHalf(0.2f))));
}

}  // namespace
}  // namespace dljob::trainer
