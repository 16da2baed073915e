#include "images/trainer/comm/gradient_compression.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "images/trainer/comm/thread_ranks_collective.h"

namespace dljob::trainer {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Quantises `values` with a zero residual; returns the words, leaves the residual in *residual.
std::vector<uint32_t> Quantize(const std::vector<float>& values, float threshold,
                               std::vector<float>* residual) {
  residual->assign(values.size(), 0.0f);
  std::vector<uint32_t> words(PackedWords(values.size()), 0xdeadbeef);
  QuantizeTwoBit(values.data(), residual->data(), values.size(), threshold, words.data());
  return words;
}

std::vector<float> Decode(const std::vector<uint32_t>& words, size_t count, float threshold) {
  std::vector<float> out(count, 0.0f);
  AddDequantizedTwoBit(words.data(), count, threshold, out.data());
  return out;
}

TEST(TwoBitTest, WordsForCounts) {
  EXPECT_EQ(PackedWords(0), 0u);
  EXPECT_EQ(PackedWords(1), 1u);
  EXPECT_EQ(PackedWords(16), 1u);
  EXPECT_EQ(PackedWords(17), 2u);
  EXPECT_EQ(TwoBitBytes(225034), 56260u);  // mnist_cnn: 14,065 words
}

// One full word by hand: value j is bits [2j, 2j+1]; 01 = +T, 10 = -T, 11 = not finite.
TEST(TwoBitTest, QuantisesOneWordExactly) {
  const std::vector<float> v = {0.5f,  -0.5f, 0.49f, -0.49f, 1.0f,       -2.0f,  0.0f, -0.0f,
                                0.25f, kNaN,  kInf,  -kInf,  0.5000001f, -0.75f, 0.1f, 3.0f};
  std::vector<float> residual;
  const std::vector<uint32_t> words = Quantize(v, 0.5f, &residual);
  ASSERT_EQ(words.size(), 1u);
  // (1<<0)|(2<<2)|(1<<8)|(2<<10)|(3<<18)|(3<<20)|(3<<22)|(1<<24)|(2<<26)|(1<<30)
  EXPECT_EQ(words[0], 0x49FC0909u);
  // Residual = value - quantised: exactly 0 at +-T, the value itself below T.
  EXPECT_EQ(residual[0], 0.0f);
  EXPECT_EQ(residual[1], 0.0f);
  EXPECT_EQ(residual[2], 0.49f);
  EXPECT_EQ(residual[3], -0.49f);
  EXPECT_EQ(residual[4], 0.5f);
  EXPECT_EQ(residual[5], -1.5f);
  EXPECT_EQ(residual[6], 0.0f);
  // -0.0 plus the zero residual is +0.0 (IEEE), code 00, and the residual stays +0.0.
  EXPECT_EQ(residual[7], 0.0f);
  EXPECT_FALSE(std::signbit(residual[7]));
  EXPECT_TRUE(std::isnan(residual[9]));
  EXPECT_TRUE(std::isnan(residual[10]));
  EXPECT_TRUE(std::isnan(residual[11]));
  EXPECT_EQ(residual[12], 0.5000001f - 0.5f);
  EXPECT_EQ(residual[13], -0.25f);
  EXPECT_EQ(residual[15], 2.5f);
}

TEST(TwoBitTest, DecodesOneWordExactly) {
  const std::vector<float> got = Decode({0x49FC0909u}, 16, 0.5f);
  const std::vector<float> want = {0.5f, -0.5f, 0,    0,    0.5f, -0.5f, 0, 0,
                                   0,    kNaN,  kNaN, kNaN, 0.5f, -0.5f, 0, 0.5f};
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << i;
      if (want[i] == 0) {
        EXPECT_FALSE(std::signbit(got[i])) << i << ": zero decodes to +0.0";
      }
    }
  }
  EXPECT_EQ(DequantizeTwoBit(kTwoBitZero, 0.5f), 0.0f);
  EXPECT_EQ(DequantizeTwoBit(kTwoBitPlus, 0.5f), 0.5f);
  EXPECT_EQ(DequantizeTwoBit(kTwoBitMinus, 0.5f), -0.5f);
  EXPECT_TRUE(std::isnan(DequantizeTwoBit(kTwoBitNotFinite, 0.5f)));
}

// Lengths that are not a multiple of 16: the last word's unused codes are 00, and decoding
// touches exactly `count` outputs.
TEST(TwoBitTest, PartialLastWord) {
  std::vector<float> residual;
  std::vector<uint32_t> words = Quantize(std::vector<float>(17, -1.0f), 0.5f, &residual);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0], 0xAAAAAAAAu);
  EXPECT_EQ(words[1], 0x2u);
  words = Quantize({1.0f, 0.0f, -1.0f, 0.7f, 0.2f}, 0.5f, &residual);
  ASSERT_EQ(words.size(), 1u);
  EXPECT_EQ(words[0], 0x1u | (0x2u << 4) | (0x1u << 6));
  std::vector<float> out(6, 7.0f);  // one guard value past the end
  AddDequantizedTwoBit(words.data(), 5, 0.5f, out.data());
  EXPECT_EQ(out, (std::vector<float>{7.5f, 7.0f, 6.5f, 7.5f, 7.0f, 7.0f}));
  EXPECT_TRUE(Quantize({}, 0.5f, &residual).empty());
}

// Three ranks' words by hand; the sum decodes each rank's codes, never the words as floats.
TEST(TwoBitTest, SumsRanksByDecoding) {
  // value 0: +T, -T, +T; value 1: 0, +T, -T; value 2: -T, -T, -T.
  const std::vector<uint32_t> gathered = {0x1u | (0x2u << 4), 0x2u | (0x1u << 2) | (0x2u << 4),
                                          0x1u | (0x2u << 2) | (0x2u << 4)};
  std::vector<float> out(3, 99.0f);
  SumPackedTwoBit(gathered.data(), 3, 3, 0.25f, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.25f, 0.0f, -0.75f}));
  // A rank's NaN code makes the sum NaN.
  const std::vector<uint32_t> with_nan = {0x3u, 0x1u};
  SumPackedTwoBit(with_nan.data(), 2, 1, 0.25f, out.data());
  EXPECT_TRUE(std::isnan(out[0]));
}

// Error feedback by hand: a constant 0.25 under T = 1 sends 0, 0, 0, +1 and repeats, so every 4
// steps the applied updates equal the gradients exactly.
TEST(TwoBitTest, ResidualCarriesOverToLaterSteps) {
  float gradient = 0.25f, residual = 0.0f;
  std::vector<float> applied;
  for (int step = 0; step < 8; ++step) {
    uint32_t word = 0;
    QuantizeTwoBit(&gradient, &residual, 1, 1.0f, &word);
    applied.push_back(DequantizeTwoBit(word & 0b11, 1.0f));
  }
  EXPECT_EQ(applied, (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(residual, 0.0f);
}

// Random gradients no larger than T: at every step the applied updates so far plus the residual
// equal the gradients so far (within float rounding), and the residual stays within T, so the
// mean applied update converges to the mean gradient. (A gradient that stays above T grows the
// residual without bound: at most T is sent per step.)
TEST(TwoBitTest, AppliedUpdatesConvergeToTheGradients) {
  constexpr size_t kValues = 100;
  constexpr int kSteps = 2000;
  constexpr float kThreshold = 0.05f;
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  std::vector<double> bias(kValues), grad_sum(kValues, 0.0), applied_sum(kValues, 0.0);
  for (size_t i = 0; i < kValues; ++i) bias[i] = 0.0008 * static_cast<double>(i) - 0.04;
  std::vector<float> gradient(kValues), residual(kValues, 0.0f);
  std::vector<uint32_t> words(PackedWords(kValues));
  for (int step = 1; step <= kSteps; ++step) {
    for (size_t i = 0; i < kValues; ++i) {
      gradient[i] = std::clamp(static_cast<float>(bias[i]) + noise(rng), -kThreshold, kThreshold);
      grad_sum[i] += gradient[i];
    }
    QuantizeTwoBit(gradient.data(), residual.data(), kValues, kThreshold, words.data());
    const std::vector<float> applied = Decode(words, kValues, kThreshold);
    for (size_t i = 0; i < kValues; ++i) {
      applied_sum[i] += applied[i];
      ASSERT_LE(std::abs(residual[i]), kThreshold * 1.000001f) << "step " << step << " value " << i;
      ASSERT_NEAR(applied_sum[i] + residual[i], grad_sum[i], 1e-3) << "step " << step;
    }
  }
  for (size_t i = 0; i < kValues; ++i) {
    // |mean applied - mean gradient| = |residual| / steps.
    EXPECT_NEAR(applied_sum[i] / kSteps, grad_sum[i] / kSteps, 0.051 / kSteps) << i;
  }
}

// Four ranks in one process, each with its own gradients: quantise, allgather the words, sum.
// Every rank's sum equals the sum of each rank's own decoded values, bit for bit on every rank.
TEST(TwoBitTest, MultiRankSumEqualsTheSumOfEachRanksDecodedValues) {
  constexpr int kRanks = 4;
  constexpr size_t kValues = 37;  // 3 words, the last partial
  constexpr float kThreshold = 0.1f;
  std::vector<std::vector<float>> gradients(kRanks);
  std::vector<std::vector<uint32_t>> own_words(kRanks);
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 0.15f);
  for (auto& g : gradients) {
    for (size_t i = 0; i < kValues; ++i) g.push_back(dist(rng));
  }
  std::vector<float> want(kValues, 0.0f);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<float> residual;
    own_words[r] = Quantize(gradients[r], kThreshold, &residual);
    AddDequantizedTwoBit(own_words[r].data(), kValues, kThreshold, want.data());
  }
  ThreadRanks group(kRanks);
  std::vector<std::vector<float>> sums(kRanks);
  std::vector<Status> statuses(kRanks);
  group.Run([&](int r, Collective& c) {
    std::vector<float> residual(kValues, 0.0f);
    std::vector<uint32_t> words(PackedWords(kValues));
    QuantizeTwoBit(gradients[r].data(), residual.data(), kValues, kThreshold, words.data());
    std::vector<uint32_t> gathered(words.size() * kRanks);
    statuses[r] = c.AllgatherBytes(words.data(), words.size() * 4, gathered.data());
    sums[r].resize(kValues);
    SumPackedTwoBit(gathered.data(), kRanks, kValues, kThreshold, sums[r].data());
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(statuses[r].ok()) << statuses[r].message();
    EXPECT_EQ(sums[r], want) << "rank " << r;
    EXPECT_EQ(group.allgather_bytes_sent(r), 12);
  }
}

// Collective's default AllgatherBytes (through the float Allgather) moves odd byte counts and
// bit patterns that are NaNs as floats unchanged.
TEST(TwoBitTest, DefaultAllgatherBytesMovesBitsUnchanged) {
  constexpr int kRanks = 3;
  ThreadRanks group(kRanks);
  std::vector<std::vector<unsigned char>> got(kRanks);
  std::vector<Status> statuses(kRanks);
  group.Run([&](int r, Collective& c) {
    // 7 bytes; 0xff 0xff 0xbf 0x7f is a signalling-NaN pattern as a little-endian float.
    const unsigned char send[7] = {0xff, 0xff, 0xbf, 0x7f, static_cast<unsigned char>(r), 0, 0x80};
    got[r].resize(7 * kRanks);
    statuses[r] = c.Collective::AllgatherBytes(send, 7, got[r].data());
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(statuses[r].ok()) << statuses[r].message();
    for (int from = 0; from < kRanks; ++from) {
      const std::vector<unsigned char> want = {
          0xff, 0xff, 0xbf, 0x7f, static_cast<unsigned char>(from), 0, 0x80};
      EXPECT_EQ(
          std::vector<unsigned char>(got[r].begin() + 7 * from, got[r].begin() + 7 * (from + 1)),
          want)
          << "rank " << r << " block " << from;
    }
  }
}

}  // namespace
}  // namespace dljob::trainer
