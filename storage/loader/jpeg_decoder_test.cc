#include "storage/loader/jpeg_decoder.h"

#include <gtest/gtest.h>

#include <cmath>

#include "storage/test_data.h"

namespace dljob::storage::loader {
namespace {

TEST(ChooseScale, PicksTheSmallestScaleThatStillCoversTheOutput) {
  const std::vector<ScaleFactor> all = ReducingScales();
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all.front(), (ScaleFactor{1, 1}));
  EXPECT_EQ(all.back(), (ScaleFactor{1, 8}));
  EXPECT_EQ(ChooseScale({0, 0, 500, 375}, 224, 224, all), (ScaleFactor{5, 8}));  // 234 >= 224
  EXPECT_EQ(ChooseScale({0, 0, 896, 900}, 224, 224, all), (ScaleFactor{1, 4}));
  EXPECT_EQ(ChooseScale({0, 0, 150, 150}, 224, 224, all), (ScaleFactor{1, 1}));
  const std::vector<ScaleFactor> halves = {{1, 2}, {1, 4}};
  EXPECT_EQ(ChooseScale({0, 0, 500, 375}, 224, 224, halves), (ScaleFactor{1, 1}));
  EXPECT_EQ(ChooseScale({0, 0, 500, 500}, 224, 224, halves), (ScaleFactor{1, 2}));
  EXPECT_EQ(ChooseScale({0, 0, 500, 500}, 224, 224, {}), (ScaleFactor{1, 1}));
}

TEST(JpegDecoder, DecodesAtFullAndReducedScale) {
  const std::vector<uint8_t> jpeg = testdata::MakeJpeg(64, 48, 3, 5);
  JpegDecoder decoder;
  Result<JpegInfo> info = decoder.ReadInfo(jpeg);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->width, 64);
  EXPECT_EQ(info->height, 48);
  DecodedImage full, half;
  ASSERT_TRUE(decoder.Decode(jpeg, 3, {1, 1}, full).ok());
  EXPECT_EQ(full.width, 64);
  EXPECT_EQ(full.height, 48);
  ASSERT_TRUE(decoder.Decode(jpeg, 3, {1, 2}, half).ok());
  EXPECT_EQ(half.width, 32);
  EXPECT_EQ(half.height, 24);
  // The half-scale decode approximates 2x2 averages of the full one.
  double err = 0;
  for (int y = 0; y < 24; ++y) {
    for (int x = 0; x < 32; ++x) {
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int yy, int xx) { return full.pixels[(yy * 64 + xx) * 3 + c]; };
        const double avg =
            (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1)) / 4.0;
        err += std::abs(avg - half.pixels[(y * 32 + x) * 3 + c]);
      }
    }
  }
  EXPECT_LT(err / (24 * 32 * 3), 12.0);
  DecodedImage grey;
  ASSERT_TRUE(decoder.Decode(jpeg, 1, {1, 1}, grey).ok());
  EXPECT_EQ(grey.channels, 1);
}

TEST(JpegDecoder, DamagedJpegsAreErrors) {
  std::vector<uint8_t> jpeg = testdata::MakeJpeg(64, 48, 3, 5);
  JpegDecoder decoder;
  DecodedImage out;
  std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + jpeg.size() / 2);
  Status s = decoder.Decode(cut, 3, {1, 1}, out);
  EXPECT_FALSE(s.ok()) << "a truncated JPEG must not decode silently";
  std::vector<uint8_t> junk(100, 0x42);
  s = decoder.Decode(junk, 3, {1, 1}, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a readable JPEG"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace dljob::storage::loader
