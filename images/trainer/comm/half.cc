#include "images/trainer/comm/half.h"

#include <bit>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dljob::trainer {

uint16_t FloatToHalf(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;  // magnitude bits
  if (a >= 0x7f800000u) {              // infinity or NaN
    if (a == 0x7f800000u) return sign | 0x7c00u;
    // A quiet NaN with the top of the payload, as the F16C instructions make it.
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  }
  // 65520 is halfway between the largest half (65504, odd mantissa) and 2^16: ties to even
  // round it, and everything above, to infinity.
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a >= 0x38800000u) {                   // a normal half (from 2^-14 up)
    uint32_t h = (a >> 13) - (112u << 10);  // rebias the exponent from 127 to 15
    const uint32_t rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
    return static_cast<uint16_t>(sign | h);
  }
  // A subnormal half counts units of 2^-24. Below 2^-25 (half a unit, a tie with zero) is zero.
  const uint32_t exponent = a >> 23;
  if (exponent < 102) return sign;
  const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;  // value = mantissa * 2^(exponent-150)
  const uint32_t shift = 126 - exponent;                  // 14..24
  uint32_t h = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u))) ++h;  // 0x400 is the smallest normal
  return static_cast<uint16_t>(sign | h);
}

float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) {
    // Infinity, or a NaN made quiet with its payload kept, as the F16C instructions do.
    const uint32_t quiet = mantissa != 0 ? 0x400000u : 0;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

namespace {

#if defined(__x86_64__)
// The F16C conversions (8 values an instruction) round to nearest even and handle subnormals,
// infinities and NaNs exactly as the scalar code above; half_test checks that they agree.
bool HasF16c() {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}

__attribute__((target("avx,f16c"))) size_t FloatsToHalvesF16c(const float* src, uint16_t* dst,
                                                              size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  return i;
}

__attribute__((target("avx,f16c"))) size_t HalvesToFloatsF16c(const uint16_t* src, float* dst,
                                                              size_t n, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_mul_ps(f, s));
  }
  return i;
}

__attribute__((target("avx,f16c"))) size_t AddHalvesF16c(const uint16_t* in, uint16_t* inout,
                                                         size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    auto* out = reinterpret_cast<__m128i*>(inout + i);
    const __m256 b = _mm256_cvtph_ps(_mm_loadu_si128(out));
    _mm_storeu_si128(out, _mm256_cvtps_ph(_mm256_add_ps(a, b), _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}
#else
bool HasF16c() { return false; }
size_t FloatsToHalvesF16c(const float*, uint16_t*, size_t) { return 0; }
size_t HalvesToFloatsF16c(const uint16_t*, float*, size_t, float) { return 0; }
size_t AddHalvesF16c(const uint16_t*, uint16_t*, size_t) { return 0; }
#endif

}  // namespace

void FloatsToHalves(const float* src, uint16_t* dst, size_t n) {
  size_t i = HasF16c() ? FloatsToHalvesF16c(src, dst, n) : 0;
  for (; i < n; ++i) dst[i] = FloatToHalf(src[i]);
}

void HalvesToFloatsScaled(const uint16_t* src, float* dst, size_t n, float scale) {
  size_t i = HasF16c() ? HalvesToFloatsF16c(src, dst, n, scale) : 0;
  for (; i < n; ++i) dst[i] = HalfToFloat(src[i]) * scale;
}

void AddHalves(const uint16_t* in, uint16_t* inout, size_t n) {
  size_t i = HasF16c() ? AddHalvesF16c(in, inout, n) : 0;
  for (; i < n; ++i) inout[i] = FloatToHalf(HalfToFloat(in[i]) + HalfToFloat(inout[i]));
}

}  // namespace dljob::trainer
