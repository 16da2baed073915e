#include "storage/loader/image_transform.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "base/random.h"
#include "storage/loader/sampler.h"

namespace dljob::storage::loader {
namespace {

Rect RandomResizedCrop(int width, int height, const AugmentOptions& o, Rng& rng) {
  const double area = double(width) * height;
  const double log_lo = std::log(o.ratio_min), log_hi = std::log(o.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * UniformIn(rng, o.scale_min, o.scale_max);
    const double aspect = std::exp(UniformIn(rng, log_lo, log_hi));
    const int w = static_cast<int>(std::lround(std::sqrt(target * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / aspect)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const auto y = static_cast<int>(UniformBelow(rng, uint64_t(height - h) + 1));
      const auto x = static_cast<int>(UniformBelow(rng, uint64_t(width - w) + 1));
      return {double(x), double(y), double(w), double(h)};
    }
  }
  // Fallback, as torchvision: the whole image, cut to the nearest allowed aspect ratio.
  const double in_ratio = double(width) / height;
  int w = width, h = height;
  if (in_ratio < o.ratio_min) {
    h = static_cast<int>(std::lround(w / o.ratio_min));
  } else if (in_ratio > o.ratio_max) {
    w = static_cast<int>(std::lround(h * o.ratio_max));
  }
  w = std::clamp(w, 1, width);
  h = std::clamp(h, 1, height);
  return {double((width - w) / 2), double((height - h) / 2), double(w), double(h)};
}

Rect CenterCrop(int width, int height, int out_width, int out_height, double fraction) {
  const double aspect = double(out_width) / out_height;
  double w = width, h = height;
  if (double(width) / height > aspect) {
    w = height * aspect;
  } else {
    h = width / aspect;
  }
  const int cw = std::clamp(static_cast<int>(std::lround(w * fraction)), 1, width);
  const int ch = std::clamp(static_cast<int>(std::lround(h * fraction)), 1, height);
  return {double((width - cw) / 2), double((height - ch) / 2), double(cw), double(ch)};
}

// Separable, vertical first: for each output row the two source rows are blended over the
// columns the crop uses (contiguous bytes to floats, which the compiler vectorises), then that one
// float row is sampled horizontally, converted to the output channels and normalised. One
// horizontal pass per output row, however much the crop shrinks vertically.
template <int kSrc, int kOut, bool kChw>
void Kernel(const ImageView& src, const std::vector<Tap>& xs, const std::vector<Tap>& ys,
            const float* scale, const float* bias, int ow, int oh, float* out,
            std::vector<float>& blended) {
  const int64_t plane = int64_t{ow} * oh;
  int lo = src.width, hi = 0;
  for (const Tap& t : xs) {
    lo = std::min(lo, t.i0);
    hi = std::max(hi, t.i1);
  }
  const int span = (hi - lo + 1) * kSrc;
  if (blended.size() < static_cast<size_t>(span)) blended.resize(static_cast<size_t>(span));
  float* b = blended.data() - int64_t{lo} * kSrc;  // indexed by source column * kSrc
  for (int oy = 0; oy < oh; ++oy) {
    const Tap ty = ys[oy];
    const uint8_t* r0 = src.pixels + ty.i0 * src.stride + int64_t{lo} * kSrc;
    const uint8_t* r1 = src.pixels + ty.i1 * src.stride + int64_t{lo} * kSrc;
    const float wy = ty.f;
    float* dst = blended.data();
    for (int i = 0; i < span; ++i) dst[i] = r0[i] + wy * float(int(r1[i]) - int(r0[i]));
    float* row = out + (kChw ? int64_t{oy} * ow : int64_t{oy} * ow * kOut);
    for (int ox = 0; ox < ow; ++ox) {
      const Tap t = xs[ox];
      const float* p = b + t.i0 * kSrc;
      const float* q = b + t.i1 * kSrc;
      float v[kSrc];
      for (int k = 0; k < kSrc; ++k) v[k] = p[k] + t.f * (q[k] - p[k]);
      for (int k = 0; k < kOut; ++k) {
        float x;
        if constexpr (kSrc == kOut) {
          x = v[k];
        } else if constexpr (kSrc == 1) {
          x = v[0];
        } else {
          x = (v[0] + v[1] + v[2]) * (1.0f / 3.0f);
        }
        const float y = x * scale[k] + bias[k];
        if constexpr (kChw) {
          row[k * plane + ox] = y;
        } else {
          row[ox * kOut + k] = y;
        }
      }
    }
  }
}

template <int kSrc, int kOut>
void Dispatch(bool chw, const ImageView& src, ResizeScratch& scratch, const float* scale,
              const float* bias, int ow, int oh, float* out) {
  if (chw) {
    Kernel<kSrc, kOut, true>(src, scratch.xs, scratch.ys, scale, bias, ow, oh, out, scratch.row);
  } else {
    Kernel<kSrc, kOut, false>(src, scratch.xs, scratch.ys, scale, bias, ow, oh, out, scratch.row);
  }
}

}  // namespace

Augmentation ChooseAugmentation(int width, int height, int out_width, int out_height,
                                const AugmentOptions& options, uint64_t seed, int64_t epoch,
                                uint64_t sample) {
  assert(width >= 1 && height >= 1);
  Rng rng(MixSeed(seed, static_cast<uint64_t>(epoch), sample));
  Augmentation aug;
  aug.crop = options.random_crop
                 ? RandomResizedCrop(width, height, options, rng)
                 : CenterCrop(width, height, out_width, out_height, options.center_fraction);
  aug.flip = options.flip && (rng() >> 63) != 0;
  return aug;
}

void BilinearTaps(double start, double length, int size, int out, bool mirror,
                  std::vector<Tap>& taps) {
  taps.resize(static_cast<size_t>(out));
  const double lo = std::max(start, 0.0);
  const double hi = std::max(lo, std::min(start + length, double(size)) - 1.0);
  const double step = length / out;
  for (int o = 0; o < out; ++o) {
    double s = start + (o + 0.5) * step - 0.5;
    s = std::clamp(s, lo, hi);
    const int i0 = std::min(static_cast<int>(s), size - 1);
    const int i1 = std::min(i0 + 1, size - 1);
    taps[mirror ? out - 1 - o : o] = {i0, i1, static_cast<float>(s - i0)};
  }
}

void ResizeNormalize(const ImageView& src, const Rect& crop, bool flip, const OutputSpec& spec,
                     float* out) {
  ResizeScratch scratch;
  ResizeNormalize(src, crop, flip, spec, out, scratch);
}

void ResizeNormalize(const ImageView& src, const Rect& crop, bool flip, const OutputSpec& spec,
                     float* out, ResizeScratch& scratch) {
  assert(src.channels == 1 || src.channels == 3);
  assert(spec.channels == 1 || spec.channels == 3);
  BilinearTaps(crop.x, crop.width, src.width, spec.width, flip, scratch.xs);
  BilinearTaps(crop.y, crop.height, src.height, spec.height, false, scratch.ys);
  float scale[3], bias[3];
  for (int k = 0; k < spec.channels; ++k) {
    scale[k] = 1.0f / (255.0f * spec.std[k]);
    bias[k] = -spec.mean[k] / spec.std[k];
  }
  const bool chw = spec.layout == Layout::kCHW;
  const int ow = spec.width, oh = spec.height;
  if (src.channels == 3 && spec.channels == 3) {
    Dispatch<3, 3>(chw, src, scratch, scale, bias, ow, oh, out);
  } else if (src.channels == 1 && spec.channels == 1) {
    Dispatch<1, 1>(chw, src, scratch, scale, bias, ow, oh, out);
  } else if (src.channels == 1) {
    Dispatch<1, 3>(chw, src, scratch, scale, bias, ow, oh, out);
  } else {
    Dispatch<3, 1>(chw, src, scratch, scale, bias, ow, oh, out);
  }
}

}  // namespace dljob::storage::loader
