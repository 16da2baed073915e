// Image augmentation and conversion to the network's input: pure functions, no I/O.
//
// ChooseAugmentation draws a sample's crop rectangle and flip from a random stream seeded by
// (seed, epoch, sample) only, so a sample gets the same augmentation whichever thread or rank
// handles it, and a different one each epoch. The crop follows torchvision's RandomResizedCrop:
// up to 10 tries of an area fraction drawn uniformly from [scale_min, scale_max] and an aspect
// ratio drawn log-uniformly from [ratio_min, ratio_max], accepted when it fits the image at a
// uniformly drawn position; otherwise a central crop clamped to the ratio range. Without
// random_crop the crop is central: the largest rectangle of the output's aspect ratio, scaled by
// center_fraction (0.875 is the usual "resize to 256, crop 224").
//
// ResizeNormalize then samples the crop bilinearly (pixel centres at +0.5, as OpenCV and
// torchvision's non-antialiased resize) through per-axis tap tables (BilinearTaps), separably:
// for each output row the two source rows are blended once over the crop's columns, then that row
// is sampled horizontally. It mirrors the crop if asked, and writes
// (pixel / 255 - mean[c]) / std[c] as floats in CHW or HWC order. The crop may have fractional
// coordinates (a crop chosen on the full image, mapped onto a JPEG decoded at a reduced scale).
// Thread-safe: no state (a ResizeScratch belongs to one thread at a time).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace dljob::storage::loader {

struct AugmentOptions {
  bool random_crop = true;
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
  bool flip = true;                // mirror horizontally with probability 1/2
  double center_fraction = 0.875;  // without random_crop
};

enum class Layout { kCHW, kHWC };

struct OutputSpec {
  int width = 224, height = 224;
  int channels = 3;  // 1 or 3
  Layout layout = Layout::kCHW;
  std::array<float, 3> mean = {0.485f, 0.456f, 0.406f};
  std::array<float, 3> std = {0.229f, 0.224f, 0.225f};
  int64_t floats() const { return int64_t{width} * height * channels; }
};

// A rectangle in pixel units of some image; integral when chosen, fractional once scaled.
struct Rect {
  double x = 0, y = 0, width = 0, height = 0;
  bool operator==(const Rect&) const = default;
};

struct Augmentation {
  Rect crop;  // integral, inside the width x height image it was chosen for
  bool flip = false;
};

// REQUIRES: width, height >= 1; 0 < scale_min <= scale_max; 0 < ratio_min <= ratio_max.
Augmentation ChooseAugmentation(int width, int height, int out_width, int out_height,
                                const AugmentOptions& options, uint64_t seed, int64_t epoch,
                                uint64_t sample);

// An 8-bit interleaved image (channels 1 or 3), rows `stride` bytes apart. Not owned.
struct ImageView {
  const uint8_t* pixels = nullptr;
  int width = 0, height = 0, channels = 0;
  int64_t stride = 0;
};

// Bilinear sampling along one axis: output pixel o of `out` samples source coordinate
// start + (o + 0.5) * length / out - 0.5, clamped to the crop [start, start + length) and the
// image [0, size), as the left/top pixel i0, its neighbour i1 = min(i0 + 1, size - 1) and the
// weight f in [0, 1) of i1. With `mirror` the table is reversed (output o takes position
// out - 1 - o), which flips the image for free.
struct Tap {
  int i0 = 0, i1 = 0;
  float f = 0;
  bool operator==(const Tap&) const = default;
};
// Fills `taps` (resized to out; its storage reused). REQUIRES: size >= 1, out >= 1, length > 0.
void BilinearTaps(double start, double length, int size, int out, bool mirror,
                  std::vector<Tap>& taps);

// Per-thread buffers of ResizeNormalize, so that resizing a sample allocates nothing once they
// have grown to the largest crop.
struct ResizeScratch {
  std::vector<Tap> xs, ys;
  std::vector<float> row;  // one vertically blended source row
};

// Writes spec.floats() floats to `out`. The crop is clamped to the image. A 1-channel source
// fills all output channels; a 3-channel source with a 1-channel output is reduced to its mean.
void ResizeNormalize(const ImageView& src, const Rect& crop, bool flip, const OutputSpec& spec,
                     float* out, ResizeScratch& scratch);
// The same with buffers of its own.
void ResizeNormalize(const ImageView& src, const Rect& crop, bool flip, const OutputSpec& spec,
                     float* out);

}  // namespace dljob::storage::loader
