#include "images/trainer/comm/half.h"

#include <bit>

namespace dljob::trainer {

uint16_t FloatToHalf(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;  // magnitude bits
  if (a >= 0x7f800000u) {              // infinity or NaN
    if (a == 0x7f800000u) return sign | 0x7c00u;
    uint32_t mantissa = (a >> 13) & 0x3ffu;
    if (mantissa == 0) mantissa = 0x200u;  // the payload was only in the dropped bits
    return static_cast<uint16_t>(sign | 0x7c00u | mantissa);
  }
  // 65520 is halfway between the largest half (65504, odd mantissa) and 2^16: ties to even
  // round it, and everything above, to infinity.
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a >= 0x38800000u) {  // a normal half (from 2^-14 up)
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
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

void FloatsToHalves(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = FloatToHalf(src[i]);
}

void HalvesToFloatsScaled(const uint16_t* src, float* dst, size_t n, float scale) {
  for (size_t i = 0; i < n; ++i) dst[i] = HalfToFloat(src[i]) * scale;
}

void AddHalves(const uint16_t* in, uint16_t* inout, size_t n) {
  for (size_t i = 0; i < n; ++i) inout[i] = FloatToHalf(HalfToFloat(in[i]) + HalfToFloat(inout[i]));
}

}  // namespace dljob::trainer
