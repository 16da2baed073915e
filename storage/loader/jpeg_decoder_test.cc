#include "storage/loader/jpeg_decoder.h"

#include <cmath>

#include <gtest/gtest.h>

#include "storage/testing/test_data.h"

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
        const double avg = (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) +
                            at(2 * y + 1, 2 * x + 1)) /
                           4.0;
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

namespace dljob::storage::loader {
namespace {

TEST(JpegDecoder, CropDecodeMatchesTheSameRegionOfAFullDecode) {
  const std::vector<uint8_t> jpeg = testdata::MakeJpeg(96, 80, 3, 11);
  JpegDecoder decoder;
  DecodedImage full, part;
  ASSERT_TRUE(decoder.Decode(jpeg, 3, {1, 1}, full).ok());
  const Rect crop{37, 21, 30, 40};
  Result<Rect> where = decoder.DecodeCrop(jpeg, 3, {1, 1}, crop, part);
  ASSERT_TRUE(where.ok()) << where.status().message();
  EXPECT_EQ(part.height, 40);
  EXPECT_GE(part.width, 30);
  EXPECT_EQ(where->y, 0);
  EXPECT_EQ(where->width, 30);
  const int dx = 37 - static_cast<int>(where->x);  // the first decoded column, rounded to an iMCU
  EXPECT_EQ(dx % 16, 0);
  double err = 0;
  for (int y = 0; y < 40; ++y) {
    for (int x = 0; x < 30; ++x) {
      for (int c = 0; c < 3; ++c) {
        err += std::abs(int(full.pixels[((21 + y) * 96 + 37 + x) * 3 + c]) -
                        int(part.pixels[(y * part.width + int(where->x) + x) * 3 + c]));
      }
    }
  }
  EXPECT_LT(err / (40 * 30 * 3), 1.0);
  // At half scale the crop maps to half-size coordinates.
  where = decoder.DecodeCrop(jpeg, 3, {1, 2}, crop, part);
  ASSERT_TRUE(where.ok());
  EXPECT_EQ(part.height, 21);  // rows 10..30 cover 10.5..30.5
  EXPECT_DOUBLE_EQ(where->width, 15);
}

TEST(JpegDecoder, CropDecodeOfDamagedDataIsAnError) {
  const std::vector<uint8_t> jpeg = testdata::MakeJpeg(64, 48, 3, 5);
  std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + jpeg.size() / 2);
  JpegDecoder decoder;
  DecodedImage out;
  Result<Rect> r = decoder.DecodeCrop(cut, 3, {1, 1}, {0, 0, 64, 48}, out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("JPEG decode failed"), std::string::npos);
  std::vector<uint8_t> junk(100, 0x42);
  EXPECT_FALSE(decoder.DecodeCrop(junk, 3, {1, 1}, {0, 0, 4, 4}, out).ok());
}

}  // namespace
}  // namespace dljob::storage::loader
