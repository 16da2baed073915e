// 2-bit gradient compression with error feedback, as MXNet's KVStore does it
// (--gradient_compression=2bit --compression_threshold=T): the pure core, no communication.
//
// Each step a rank adds the residual it kept from the previous step to its gradient and
// quantises the result v to one of three values:
//     v >= T  ->  +T          v <= -T  ->  -T          otherwise  ->  0
// and keeps residual = v - quantised for the next step (error feedback: what was not sent is
// sent later, so the applied updates add up to the gradients over time). The quantised values
// travel as 2-bit codes, 16 to a 32-bit word:
//     value 16*w + j of the vector is bits [2j, 2j+1] of word w (least significant bits first);
//     code 0b00 = 0, 0b01 = +T, 0b10 = -T, 0b11 = not finite.
// A vector of n values takes PackedWords(n) = ceil(n / 16) words; the unused codes of the last
// word are 0b00. Words are sums of bits, never floats: the receiver decodes every rank's words
// (SumPacked) and adds the values in float, in rank order, so every rank computes bit-identical
// sums.
//
// Edge cases (the tests pin each one):
//   - exactly +T or -T quantises to +T or -T, leaving a residual of exactly 0;
//   - -0.0 (and any |v| < T) is code 0b00 and decodes to +0.0; the residual keeps v itself;
//   - NaN or +-infinity in v is code 0b11, which decodes to NaN, so the sum, the update and the
//     parameter become NaN and the trainer's non-finite loss check stops the run, as it would
//     without compression (a NaN is never silently turned into "no update"). The residual of
//     such a value is NaN.
//
// REQUIRES of every function: threshold > 0 and finite; buffers hold the counts stated and do
// not overlap. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dljob::trainer {

inline constexpr size_t kTwoBitValuesPerWord = 16;
inline constexpr uint32_t kTwoBitZero = 0b00;
inline constexpr uint32_t kTwoBitPlus = 0b01;
inline constexpr uint32_t kTwoBitMinus = 0b10;
inline constexpr uint32_t kTwoBitNotFinite = 0b11;

// Words that hold `count` 2-bit codes: ceil(count / 16).
constexpr size_t PackedWords(size_t count) {
  return (count + kTwoBitValuesPerWord - 1) / kTwoBitValuesPerWord;
}

// For i in [0, count): v = gradient[i] + residual[i]; its code goes to packed (PackedWords(count)
// words, overwritten) and residual[i] becomes v - Dequantised(code) (NaN for a non-finite v).
void QuantizeTwoBit(const float* gradient, float* residual, size_t count, float threshold,
                    uint32_t* packed);

// The value of one code: 0, +threshold, -threshold, or NaN for 0b11.
float DequantizeTwoBit(uint32_t code, float threshold);

// out[i] += the decoded value i of packed (PackedWords(count) words), for i in [0, count).
void AddDequantizedTwoBit(const uint32_t* packed, size_t count, float threshold, float* out);

// out[0..count) = the sum over `ranks` blocks of PackedWords(count) words each, laid end to end
// in rank order (what an allgather of every rank's packed vector yields), decoded and added in
// rank order starting from +0.0.
void SumPackedTwoBit(const uint32_t* gathered, int ranks, size_t count, float threshold,
                     float* out);

// Bytes one rank sends per step for `count` gradient values: 4 * PackedWords(count).
constexpr size_t TwoBitBytes(size_t count) { return PackedWords(count) * sizeof(uint32_t); }

}  // namespace dljob::trainer
