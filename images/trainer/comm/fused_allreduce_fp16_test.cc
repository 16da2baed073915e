// FusedAllreducer with FusionOptions::fp16 on fakes: values go through halves (exactly one
// rounding to half, since the identical-ranks sum over 4 ranks is a power-of-two scaling), for
// packed, in-place, segmented and pipelined layouts; one rank sends nothing.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/half.h"
#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/loopback_collective.h"

namespace dljob::trainer {
namespace {

// Values that are not exact in half, of mixed signs and magnitudes, including subnormal halves.
std::vector<std::vector<float>> MakeTensors(const std::vector<size_t>& counts) {
  std::vector<std::vector<float>> tensors;
  size_t next = 0;
  for (size_t n : counts) {
    std::vector<float> t(n);
    for (float& v : t) {
      const auto k = static_cast<float>(next++);
      v = (std::fmod(k * 0.37f, 11.0f) - 5.3f) * std::ldexp(1.0f, static_cast<int>(next % 30) - 20);
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

std::vector<FloatSpan> Spans(std::vector<std::vector<float>>& tensors) {
  std::vector<FloatSpan> spans;
  for (auto& t : tensors) spans.push_back({t.data(), t.size()});
  return spans;
}

TEST(FusedAllreducerFp16Test, MeanOfIdenticalRanksIsTheValueRoundedToHalf) {
  const std::vector<size_t> counts = {7, 0, 1, 33, 5, 64, 3, 0, 129, 2, 1001};
  for (size_t threshold_floats : {0, 1, 16, 100, 10000}) {
    for (size_t segment_floats : {0, 1, 5, 16}) {
      for (int in_flight : {1, 3}) {
        IdenticalRanksCollective c(4);
        FusionOptions options{threshold_floats * 4, segment_floats * 4, in_flight};
        options.fp16 = true;
        FusedAllreducer f(c, options);
        auto tensors = MakeTensors(counts);
        const auto original = tensors;
        for (int round = 0; round < 2; ++round) {  // the second reuses plan and staging buffer
          ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
          for (size_t t = 0; t < tensors.size(); ++t) {
            for (size_t i = 0; i < tensors[t].size(); ++i) {
              const float x = original[t][i];
              ASSERT_EQ(tensors[t][i], HalfToFloat(FloatToHalf(x)))
                  << threshold_floats << " " << segment_floats << " " << in_flight << " tensor "
                  << t << " [" << i << "]";
              ASSERT_LE(std::fabs(tensors[t][i] - x), std::fabs(x) * 0x1p-11f + 0x1p-25f);
            }
          }
        }
        EXPECT_EQ(c.allreduce_calls(), 0);  // no float traffic at all
        EXPECT_GT(c.allreduce_half_calls(), 0);
      }
    }
  }
}

TEST(FusedAllreducerFp16Test, ScalesTheHalfSumByTheWorldSize) {
  IdenticalRanksCollective c(3);  // sum = 3x in half, mean = that / 3 in float
  FusionOptions options;
  options.fp16 = true;
  FusedAllreducer f(c, options);
  std::vector<std::vector<float>> tensors = {{1.0f, 0.1f, -700.0f}, {}, {2.5f}};
  ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
  const float third = 1.0f / 3.0f;
  EXPECT_EQ(tensors[0][0], 3.0f * third);
  EXPECT_EQ(tensors[0][1], HalfToFloat(FloatToHalf(HalfToFloat(FloatToHalf(0.1f)) * 3)) * third);
  EXPECT_EQ(tensors[0][2], HalfToFloat(FloatToHalf(-2100.0f)) * third);
  EXPECT_EQ(tensors[2][0], 7.5f * third);
}

// average = false: the half sum is unpacked unscaled (4 identical ranks: 4 * x rounded to half
// once, the fake's half sum), packed, in place and segmented alike.
TEST(FusedAllreducerFp16Test, SumIsTheHalfSumUnscaled) {
  for (size_t segment_floats : {0, 5, 16}) {
    IdenticalRanksCollective c(4);
    FusionOptions options{100 * 4, segment_floats * 4, 1};
    options.fp16 = true;
    options.average = false;
    FusedAllreducer f(c, options);
    auto tensors = MakeTensors({7, 0, 33, 129, 2});
    const auto original = tensors;
    ASSERT_TRUE(f.Allreduce(Spans(tensors)).ok());
    for (size_t t = 0; t < tensors.size(); ++t) {
      for (size_t i = 0; i < tensors[t].size(); ++i) {
        const float want = HalfToFloat(FloatToHalf(HalfToFloat(FloatToHalf(original[t][i])) * 4));
        ASSERT_EQ(tensors[t][i], want) << segment_floats << " tensor " << t << " [" << i << "]";
      }
    }
    EXPECT_EQ(c.allreduce_calls(), 0);  // all on the half path
    EXPECT_GT(c.allreduce_half_calls(), 0);
  }
}

TEST(FusedAllreducerFp16Test, OneRankSendsNothingAndKeepsFloats) {
  LoopbackCollective c;
  FusionOptions options;
  options.fp16 = true;
  FusedAllreducer f(c, options);
  auto tensors = MakeTensors({5, 0, 17});
  const auto want = tensors;
  ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
  EXPECT_EQ(tensors, want);
  EXPECT_EQ(c.allreduce_half_calls(), 0);
}

TEST(FusedAllreducerFp16Test, BucketByBucketMatchesAllAtOnce) {
  const std::vector<size_t> counts = {3, 40, 0, 7, 300, 2};
  FusionOptions options{16 * 4, 8 * 4, 1};
  options.fp16 = true;
  IdenticalRanksCollective a(2);
  IdenticalRanksCollective b(2);
  FusedAllreducer whole(a, options);
  FusedAllreducer buckets(b, options);
  auto x = MakeTensors(counts);
  auto y = x;
  ASSERT_TRUE(whole.AllreduceAverage(Spans(x)).ok());
  const auto& plan = buckets.Plan(counts);
  ASSERT_GT(plan.size(), 2u);
  for (size_t i = plan.size(); i-- > 0;) ASSERT_TRUE(buckets.ReduceBucket(i, Spans(y)).ok());
  EXPECT_EQ(x, y);
}

TEST(FusedAllreducerFp16Test, ACommunicationErrorNamesTheTensors) {
  IdenticalRanksCollective c(2);
  c.FailFrom(0);
  FusionOptions options;
  options.fp16 = true;
  FusedAllreducer f(c, options);
  auto tensors = MakeTensors({4, 4});
  Status s = f.AllreduceAverage(Spans(tensors));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("tensors 0..1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace dljob::trainer
