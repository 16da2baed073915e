#include "storage/loader/image_transform.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace dljob::storage::loader {
namespace {

TEST(ChooseAugmentation, RandomCropsFollowTheScaleAndRatioRanges) {
  AugmentOptions o;
  int flips = 0, fallbacks = 0;
  for (uint64_t sample = 0; sample < 2000; ++sample) {
    Augmentation a = ChooseAugmentation(500, 375, 224, 224, o, 7, 0, sample);
    const Rect& c = a.crop;
    ASSERT_GE(c.x, 0);
    ASSERT_GE(c.y, 0);
    ASSERT_LE(c.x + c.width, 500);
    ASSERT_LE(c.y + c.height, 375);
    ASSERT_EQ(c.x, std::floor(c.x));
    const double area = c.width * c.height / (500.0 * 375.0);
    const double ratio = c.width / c.height;
    if (area > 0.999) {
      ++fallbacks;
      continue;
    }
    // Rounding to whole pixels moves both a little past the drawn values.
    EXPECT_GE(area, 0.08 * 0.97);
    EXPECT_GE(ratio, 0.75 * 0.97);
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.03);
    flips += a.flip;
  }
  EXPECT_GT(flips, 800);
  EXPECT_LT(flips, 1200);
  EXPECT_LT(fallbacks, 100);
}

TEST(ChooseAugmentation, DeterministicPerSeedEpochAndSample) {
  AugmentOptions o;
  auto a = ChooseAugmentation(64, 48, 32, 32, o, 1, 2, 3);
  auto b = ChooseAugmentation(64, 48, 32, 32, o, 1, 2, 3);
  EXPECT_EQ(a.crop, b.crop);
  EXPECT_EQ(a.flip, b.flip);
  int differ = 0;
  for (uint64_t s = 0; s < 20; ++s) {
    differ += !(ChooseAugmentation(64, 48, 32, 32, o, 1, 2, s).crop ==
                ChooseAugmentation(64, 48, 32, 32, o, 1, 3, s).crop);
  }
  EXPECT_GE(differ, 18) << "another epoch draws other crops";
}

TEST(ChooseAugmentation, CenterCropKeepsTheOutputAspect) {
  AugmentOptions o;
  o.random_crop = false;
  o.flip = false;
  auto a = ChooseAugmentation(500, 375, 224, 224, o, 1, 0, 0);
  EXPECT_EQ(a.crop, (Rect{86, 23, 328, 328}));  // 375 * 0.875 = 328.1, centred
  EXPECT_FALSE(a.flip);
  o.center_fraction = 1.0;
  EXPECT_EQ(ChooseAugmentation(28, 28, 28, 28, o, 1, 0, 0).crop, (Rect{0, 0, 28, 28}));
}

OutputSpec Spec(int w, int h, int c, Layout layout = Layout::kCHW) {
  OutputSpec s;
  s.width = w;
  s.height = h;
  s.channels = c;
  s.layout = layout;
  s.mean = {0.5f, 0.25f, 0.0f};
  s.std = {0.5f, 0.25f, 1.0f};
  return s;
}

TEST(ResizeNormalize, SameSizeIsExactNormalisation) {
  std::vector<uint8_t> px(4 * 3 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 7);
  ImageView v{px.data(), 4, 3, 3, 12};
  std::vector<float> out(4 * 3 * 3);
  ResizeNormalize(v, {0, 0, 4, 3}, false, Spec(4, 3, 3), out.data());
  const float mean[3] = {0.5f, 0.25f, 0.0f}, sd[3] = {0.5f, 0.25f, 1.0f};
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 4; ++x) {
        const float want = (px[(y * 4 + x) * 3 + c] / 255.0f - mean[c]) / sd[c];
        EXPECT_NEAR(out[c * 12 + y * 4 + x], want, 1e-5) << c << " " << y << " " << x;
      }
    }
  }
}

TEST(ResizeNormalize, FlipMirrorsAndHwcMatchesChw) {
  std::vector<uint8_t> px = {0, 51, 102, 153, 204, 255};  // 6x1 grey
  ImageView v{px.data(), 6, 1, 1, 6};
  OutputSpec s = Spec(6, 1, 1);
  s.mean = {0, 0, 0};
  s.std = {1, 1, 1};
  std::vector<float> plain(6), flipped(6);
  ResizeNormalize(v, {0, 0, 6, 1}, false, s, plain.data());
  ResizeNormalize(v, {0, 0, 6, 1}, true, s, flipped.data());
  for (int x = 0; x < 6; ++x) EXPECT_FLOAT_EQ(flipped[x], plain[5 - x]);
  // 1 -> 3 channels repeats the grey value; HWC interleaves what CHW puts in planes.
  OutputSpec chw = Spec(6, 1, 3), hwc = Spec(6, 1, 3, Layout::kHWC);
  std::vector<float> a(18), b(18);
  ResizeNormalize(v, {0, 0, 6, 1}, false, chw, a.data());
  ResizeNormalize(v, {0, 0, 6, 1}, false, hwc, b.data());
  for (int x = 0; x < 6; ++x) {
    for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(a[c * 6 + x], b[x * 3 + c]);
    EXPECT_FLOAT_EQ(a[x], (px[x] / 255.0f - 0.5f) / 0.5f);
  }
}

TEST(ResizeNormalize, HalvingAveragesPixelPairsAndCropsSelectTheRegion) {
  // 8x2 grey: halving the width samples between each pair of columns.
  std::vector<uint8_t> px(16);
  for (int i = 0; i < 16; ++i) px[i] = static_cast<uint8_t>(10 * (i % 8) + 100 * (i / 8));
  ImageView v{px.data(), 8, 2, 1, 8};
  OutputSpec s = Spec(4, 2, 1);
  s.mean = {0, 0, 0};
  s.std = {1.0f / 255.0f, 1, 1};  // outputs pixel values
  std::vector<float> out(8);
  ResizeNormalize(v, {0, 0, 8, 2}, false, s, out.data());
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 4; ++x) EXPECT_NEAR(out[y * 4 + x], 20 * x + 5 + 100 * y, 1e-3);
  }
  // The right half only, at its own size: its pixels exactly.
  ResizeNormalize(v, {4, 0, 4, 2}, false, s, out.data());
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 4; ++x) EXPECT_NEAR(out[y * 4 + x], 10 * (x + 4) + 100 * y, 1e-3);
  }
}

TEST(BilinearTaps, SameSizeIsIdentityHalvingBlendsPairsMirrorReverses) {
  std::vector<Tap> taps;
  BilinearTaps(2, 4, 10, 4, false, taps);  // columns 2..5 at their own size
  EXPECT_EQ(taps, (std::vector<Tap>{{2, 3, 0}, {3, 4, 0}, {4, 5, 0}, {5, 6, 0}}));
  BilinearTaps(0, 8, 8, 4, false, taps);  // halving: halfway between each pair
  EXPECT_EQ(taps, (std::vector<Tap>{{0, 1, 0.5f}, {2, 3, 0.5f}, {4, 5, 0.5f}, {6, 7, 0.5f}}));
  std::vector<Tap> mirrored;
  BilinearTaps(0, 8, 8, 4, true, mirrored);
  EXPECT_EQ(mirrored, (std::vector<Tap>{taps[3], taps[2], taps[1], taps[0]}));
}

TEST(BilinearTaps, EnlargingClampsToTheCropAndTheImage) {
  std::vector<Tap> taps;
  // 2 source pixels (3, 4) onto 4: positions 2.75, 3.25, 3.75, 4.25, clamped to [3, 4].
  BilinearTaps(3, 2, 10, 4, false, taps);
  EXPECT_EQ(taps, (std::vector<Tap>{{3, 4, 0}, {3, 4, 0.25f}, {3, 4, 0.75f}, {4, 5, 0}}));
  // A crop at the image's last column never reads past it.
  BilinearTaps(9, 1, 10, 3, false, taps);
  for (const Tap& t : taps) EXPECT_EQ(t, (Tap{9, 9, 0}));
  // A fractional crop (mapped onto a reduced-scale decode) partly outside the image.
  BilinearTaps(-0.5, 3.0, 2, 5, false, taps);
  for (const Tap& t : taps) {
    EXPECT_GE(t.i0, 0);
    EXPECT_LE(t.i1, 1);
    EXPECT_GE(t.f, 0.0f);
    EXPECT_LT(t.f, 1.0f);
  }
  // The storage is reused: shrinking keeps capacity.
  const size_t capacity = taps.capacity();
  BilinearTaps(0, 2, 2, 2, false, taps);
  EXPECT_EQ(taps.size(), 2u);
  EXPECT_EQ(taps.capacity(), capacity);
}

TEST(ResizeNormalize, ScratchBuffersGiveTheSameResultAsFreshOnes) {
  // One scratch reused across crops of different sizes (as a loader thread does).
  std::vector<uint8_t> px(40 * 30 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 7 % 251);
  const ImageView v{px.data(), 40, 30, 3, 40 * 3};
  const OutputSpec s = Spec(12, 9, 3);
  ResizeScratch scratch;
  for (const Rect& crop : {Rect{0, 0, 40, 30}, Rect{5, 3, 7, 6}, Rect{10.5, 2.25, 29.5, 27.75}}) {
    for (bool flip : {false, true}) {
      std::vector<float> a(size_t(s.floats())), b(size_t(s.floats()));
      ResizeNormalize(v, crop, flip, s, a.data(), scratch);
      ResizeNormalize(v, crop, flip, s, b.data());
      EXPECT_EQ(a, b) << crop.x << "," << crop.width << " flip " << flip;
    }
  }
}

}  // namespace
}  // namespace dljob::storage::loader
