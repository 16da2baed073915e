// The Collective defaults (ReduceSum, ReduceScatterSum, AllreduceSumHalf built on AllreduceSum)
// and the loopback and identical-ranks implementations of those operations.
#include "images/trainer/comm/collective.h"

#include <vector>

#include <gtest/gtest.h>

#include "images/trainer/comm/half.h"
#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/loopback_collective.h"

namespace dljob::trainer {
namespace {

// Rank `rank` of `world` identical ranks that only implements the required operations, so the
// defaults of Collective are what is tested.
class DefaultsOnly : public Collective {
 public:
  DefaultsOnly(int rank, int world) : rank_(rank), world_(world) {}
  int rank() const override { return rank_; }
  int size() const override { return world_; }
  std::string name() const override { return "defaults-only"; }
  Status AllreduceSum(float* data, size_t count) override {
    for (size_t i = 0; i < count; ++i) data[i] *= static_cast<float>(world_);
    return Status::Ok();
  }
  Status Broadcast(float*, size_t, int) override { return Status::Ok(); }
  Status Allgather(const float*, size_t, float*) override { return Status::Ok(); }
  Status Barrier() override { return Status::Ok(); }
  using Collective::AllreduceSum;

 private:
  int rank_;
  int world_;
};

TEST(CollectiveDefaultsTest, ReduceScatterGivesEachRankItsBlockOfTheSum) {
  const std::vector<float> send = {1, 2, 3, 4, 5, 6};  // 3 ranks, blocks of 2
  for (int rank = 0; rank < 3; ++rank) {
    DefaultsOnly c(rank, 3);
    std::vector<float> recv(2, -1.0f);
    ASSERT_TRUE(c.ReduceScatterSum(send.data(), recv.data(), 2).ok());
    EXPECT_EQ(recv, (std::vector<float>{send[2 * rank] * 3, send[2 * rank + 1] * 3})) << rank;
  }
  DefaultsOnly c(0, 3);
  EXPECT_TRUE(c.ReduceScatterSum(nullptr, nullptr, 0).ok());
  EXPECT_EQ(c.ReduceScatterSum(nullptr, nullptr, 1).code(), StatusCode::kInvalidArgument);
}

TEST(CollectiveDefaultsTest, ReduceSumLeavesTheSumOnTheRootAndChecksTheRoot) {
  DefaultsOnly c(1, 4);
  std::vector<float> data = {1, -2, 0.5f};
  ASSERT_TRUE(c.ReduceSum(data.data(), data.size(), 1).ok());
  EXPECT_EQ(data, (std::vector<float>{4, -8, 2}));
  EXPECT_EQ(c.ReduceSum(data.data(), data.size(), 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.ReduceSum(data.data(), data.size(), -1).code(), StatusCode::kInvalidArgument);
}

TEST(CollectiveDefaultsTest, HalfAllreduceSumsInFloatAndRoundsToHalf) {
  DefaultsOnly c(0, 4);
  std::vector<uint16_t> data = {FloatToHalf(1.5f), FloatToHalf(-0.1f), FloatToHalf(20000.0f), 0};
  ASSERT_TRUE(c.AllreduceSumHalf(data.data(), data.size()).ok());
  EXPECT_EQ(HalfToFloat(data[0]), 6.0f);
  EXPECT_EQ(data[1], FloatToHalf(HalfToFloat(FloatToHalf(-0.1f)) * 4));
  EXPECT_EQ(data[2], 0x7c00);  // 80000 overflows half: infinity
  EXPECT_EQ(data[3], 0);
  EXPECT_EQ(c.AllreduceSumHalf(nullptr, 2).code(), StatusCode::kInvalidArgument);
}

TEST(LoopbackCollectiveOpsTest, ReduceScatterAndHalfAndReduceAreIdentities) {
  LoopbackCollective c;
  std::vector<float> data = {1.5f, -2.0f, 7.0f};
  ASSERT_TRUE(c.ReduceSum(data.data(), data.size(), 0).ok());
  EXPECT_EQ(data, (std::vector<float>{1.5f, -2.0f, 7.0f}));
  EXPECT_EQ(c.ReduceSum(data.data(), data.size(), 1).code(), StatusCode::kInvalidArgument);
  std::vector<float> recv(3, 0.0f);
  ASSERT_TRUE(c.ReduceScatterSum(data.data(), recv.data(), 3).ok());
  EXPECT_EQ(recv, data);
  std::vector<uint16_t> halves = {FloatToHalf(0.1f), 0x7bff};
  const auto before = halves;
  ASSERT_TRUE(c.AllreduceSumHalf(halves.data(), halves.size()).ok());
  EXPECT_EQ(halves, before);
  EXPECT_EQ(c.reduce_calls(), 1);
  EXPECT_EQ(c.allreduce_half_calls(), 1);
  EXPECT_EQ(c.allreduce_calls(), 0);
}

TEST(IdenticalRanksCollectiveOpsTest, EveryReductionMultipliesByTheWorld) {
  IdenticalRanksCollective c(4);
  std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> recv(2);
  ASSERT_TRUE(c.ReduceScatterSum(data.data(), recv.data(), 2).ok());
  EXPECT_EQ(recv, (std::vector<float>{4, 8}));  // rank 0's block
  ASSERT_TRUE(c.ReduceSum(data.data(), 2, 0).ok());
  EXPECT_EQ(data[1], 8.0f);
  std::vector<uint16_t> halves = {FloatToHalf(0.75f)};
  ASSERT_TRUE(c.AllreduceSumHalf(halves.data(), 1).ok());
  EXPECT_EQ(HalfToFloat(halves[0]), 3.0f);
  EXPECT_EQ(c.allreduce_half_calls(), 1);
  c.FailFrom(1);  // one (half) allreduce so far: the next one fails
  EXPECT_EQ(c.AllreduceSumHalf(halves.data(), 1).code(), StatusCode::kUnavailable);
  EXPECT_EQ(c.AllreduceSum(data.data(), 1).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dljob::trainer
