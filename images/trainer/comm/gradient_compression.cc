#include "images/trainer/comm/gradient_compression.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dljob::trainer {
namespace {

uint32_t CodeOf(float v, float threshold) {
  if (!std::isfinite(v)) return kTwoBitNotFinite;
  if (v >= threshold) return kTwoBitPlus;
  if (v <= -threshold) return kTwoBitMinus;
  return kTwoBitZero;
}

}  // namespace

float DequantizeTwoBit(uint32_t code, float threshold) {
  switch (code & 0b11) {
    case kTwoBitPlus:
      return threshold;
    case kTwoBitMinus:
      return -threshold;
    case kTwoBitNotFinite:
      return std::numeric_limits<float>::quiet_NaN();
    default:
      return 0.0f;
  }
}

void QuantizeTwoBit(const float* gradient, float* residual, size_t count, float threshold,
                    uint32_t* packed) {
  const size_t words = PackedWords(count);
  for (size_t w = 0; w < words; ++w) {
    const size_t begin = w * kTwoBitValuesPerWord;
    const size_t end = std::min(count, begin + kTwoBitValuesPerWord);
    uint32_t word = 0;
    for (size_t i = begin; i < end; ++i) {
      const float v = gradient[i] + residual[i];
      const uint32_t code = CodeOf(v, threshold);
      // 0b11: v - NaN is NaN, the documented residual of a non-finite value.
      residual[i] = v - DequantizeTwoBit(code, threshold);
      word |= code << (2 * (i - begin));
    }
    packed[w] = word;
  }
}

void AddDequantizedTwoBit(const uint32_t* packed, size_t count, float threshold, float* out) {
  const float values[4] = {0.0f, threshold, -threshold, std::numeric_limits<float>::quiet_NaN()};
  for (size_t i = 0; i < count; ++i) {
    const uint32_t word = packed[i / kTwoBitValuesPerWord];
    out[i] += values[(word >> (2 * (i % kTwoBitValuesPerWord))) & 0b11];
  }
}

void SumPackedTwoBit(const uint32_t* gathered, int ranks, size_t count, float threshold,
                     float* out) {
  std::fill(out, out + count, 0.0f);
  const size_t words = PackedWords(count);
  for (int r = 0; r < ranks; ++r) {
    AddDequantizedTwoBit(gathered + static_cast<size_t>(r) * words, count, threshold, out);
  }
}

}  // namespace dljob::trainer
