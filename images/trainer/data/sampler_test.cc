#include "images/trainer/data/sampler.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace dljob::trainer {
namespace {

constexpr uint64_t kSeed = 1234;

TEST(EpochPermutationTest, IsAPermutationAndDeterministic) {
  std::vector<int64_t> p = EpochPermutation(1000, kSeed, 3);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_EQ(p, EpochPermutation(1000, kSeed, 3));
  EXPECT_NE(p, EpochPermutation(1000, kSeed, 4));      // reshuffled per epoch
  EXPECT_NE(p, EpochPermutation(1000, kSeed + 1, 3));  // and per seed
}

TEST(EpochPermutationTest, FixedValuesPinTheAlgorithm) {
  // Changing the shuffle would silently change every training run; pin a few values.
  EXPECT_EQ(EpochPermutation(10, 42, 0), (std::vector<int64_t>{9, 6, 2, 0, 1, 4, 3, 8, 5, 7}));
}

TEST(DistributedSamplerTest, EverySampleAtMostOncePerEpochAndSameStepsPerRank) {
  const int64_t n = 1003, batch = 7;
  for (int world : {1, 2, 3, 4}) {
    std::vector<DistributedSampler> samplers;
    for (int r = 0; r < world; ++r) samplers.emplace_back(n, world, r, batch, kSeed);
    const int64_t steps = n / (world * batch);
    std::set<int64_t> seen;
    for (int r = 0; r < world; ++r) {
      ASSERT_EQ(samplers[static_cast<size_t>(r)].steps_per_epoch(), steps);
      for (int64_t s = 0; s < steps; ++s) {
        for (int64_t i : samplers[static_cast<size_t>(r)].BatchIndices(0, s)) {
          ASSERT_GE(i, 0);
          ASSERT_LT(i, n);
          ASSERT_TRUE(seen.insert(i).second) << "sample " << i << " used twice";
        }
      }
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), steps * world * batch);
    EXPECT_GT(static_cast<int64_t>(seen.size()), n - world * batch);  // at most one batch dropped
  }
}

TEST(DistributedSamplerTest, UnionOfRanksEqualsOneRankWithTheGlobalBatch) {
  const int64_t n = 500, batch = 4;
  const int world = 3;
  DistributedSampler single(n, 1, 0, batch * world, kSeed);
  std::vector<DistributedSampler> ranks;
  for (int r = 0; r < world; ++r) ranks.emplace_back(n, world, r, batch, kSeed);
  ASSERT_EQ(single.steps_per_epoch(), ranks[0].steps_per_epoch());
  for (int64_t epoch : {0, 1}) {
    for (int64_t s = 0; s < single.steps_per_epoch(); ++s) {
      std::multiset<int64_t> together;
      for (auto& sampler : ranks) {
        for (int64_t i : sampler.BatchIndices(epoch, s)) together.insert(i);
      }
      std::vector<int64_t> one = single.BatchIndices(epoch, s);
      ASSERT_EQ(together, std::multiset<int64_t>(one.begin(), one.end()))
          << "epoch " << epoch << " step " << s;
    }
  }
}

TEST(DistributedSamplerTest, ReshufflesEachEpochDeterministically) {
  DistributedSampler a(100, 2, 1, 5, kSeed);
  DistributedSampler b(100, 2, 1, 5, kSeed);
  EXPECT_EQ(a.BatchIndices(0, 2), b.BatchIndices(0, 2));
  EXPECT_NE(a.BatchIndices(0, 0), a.BatchIndices(1, 0));
  EXPECT_EQ(a.BatchIndices(1, 3), b.BatchIndices(1, 3));
  EXPECT_EQ(a.BatchIndices(0, 2), b.BatchIndices(0, 2));  // going back to an epoch works
}

TEST(DistributedSamplerTest, BatchLargerThanDataGivesNoSteps) {
  EXPECT_EQ(DistributedSampler(10, 2, 0, 6, kSeed).steps_per_epoch(), 0);
}

}  // namespace
}  // namespace dljob::trainer
