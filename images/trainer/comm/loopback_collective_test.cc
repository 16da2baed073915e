#include "images/trainer/comm/loopback_collective.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace dljob::trainer {
namespace {

TEST(LoopbackCollectiveTest, IsASingleRankIdentity) {
  LoopbackCollective c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  float data[3] = {1.5f, -2.0f, 3.0f};
  ASSERT_TRUE(c.AllreduceSum(data, 3).ok());
  EXPECT_EQ(data[0], 1.5f);
  EXPECT_EQ(data[2], 3.0f);
  ASSERT_TRUE(c.Broadcast(data, 3, 0).ok());
  EXPECT_EQ(data[1], -2.0f);
  EXPECT_TRUE(c.Barrier().ok());
  EXPECT_EQ(c.allreduce_calls(), 1);
  EXPECT_EQ(c.broadcast_calls(), 1);
}

TEST(LoopbackCollectiveTest, RejectsARootThatIsNotARank) {
  LoopbackCollective c;
  float x = 1;
  Status s = c.Broadcast(&x, 1, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(CollectiveTensorTest, ContiguousAndStridedTensorsKeepTheirValues) {
  LoopbackCollective c;
  torch::Tensor t = torch::arange(12, torch::kFloat32).reshape({3, 4});
  torch::Tensor expected = t.clone();
  ASSERT_TRUE(c.AllreduceSum(t).ok());
  EXPECT_TRUE(torch::equal(t, expected));
  torch::Tensor strided = t.t();  // not contiguous: staged and written back
  ASSERT_TRUE(c.Broadcast(strided, 0).ok());
  EXPECT_TRUE(torch::equal(strided, expected.t()));
}

TEST(CollectiveTensorTest, RejectsNonFloatTensors) {
  LoopbackCollective c;
  torch::Tensor t = torch::zeros({2}, torch::kInt64);
  Status s = c.AllreduceSum(t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("float32"), std::string::npos);
}

TEST(AllRanksOkTest, OneRankAgreesWithItself) {
  LoopbackCollective c;
  int first = 7;
  Status comm;
  EXPECT_TRUE(AllRanksOk(c, Status::Ok(), &first, &comm));
  EXPECT_EQ(first, -1);
  EXPECT_FALSE(AllRanksOk(c, Status::NotFound("x"), &first, &comm));
  EXPECT_EQ(first, 0);
  EXPECT_TRUE(comm.ok());
}

}  // namespace
}  // namespace dljob::trainer
