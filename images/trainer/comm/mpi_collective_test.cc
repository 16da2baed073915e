// Runs under `mpirun -np N` (registered with ctest as trainer.mpi_collective_2ranks). Every rank
// runs every test; only rank 0 prints gtest's report, and the exit code is non-zero if any rank
// failed.
#include "images/trainer/comm/mpi_collective.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/mpi_environment.h"

namespace dljob::trainer {
namespace {

MpiCollective* g_collective = nullptr;  // set in main for the duration of RUN_ALL_TESTS

TEST(MpiCollectiveTest, AllreduceSumsAcrossRanks) {
  MpiCollective& c = *g_collective;
  const int n = c.size();
  std::vector<float> data = {static_cast<float>(c.rank()), 1.0f, static_cast<float>(c.rank()) * 2};
  ASSERT_TRUE(c.AllreduceSum(data.data(), data.size()).ok());
  const float ranks_sum = static_cast<float>(n * (n - 1) / 2);
  EXPECT_EQ(data[0], ranks_sum);
  EXPECT_EQ(data[1], static_cast<float>(n));
  EXPECT_EQ(data[2], 2 * ranks_sum);
}

TEST(MpiCollectiveTest, BroadcastCopiesTheRootsTensor) {
  MpiCollective& c = *g_collective;
  const int root = c.size() - 1;
  torch::Tensor t = torch::full({4, 3}, static_cast<float>(c.rank()));
  ASSERT_TRUE(c.Broadcast(t, root).ok());
  EXPECT_TRUE(torch::equal(t, torch::full({4, 3}, static_cast<float>(root))));
  torch::Tensor strided = torch::full({3, 4}, static_cast<float>(c.rank())).t();
  ASSERT_TRUE(c.Broadcast(strided, 0).ok());
  EXPECT_TRUE(torch::equal(strided, torch::zeros({4, 3})));
}

TEST(MpiCollectiveTest, TensorAllreduceAndBarrier) {
  MpiCollective& c = *g_collective;
  torch::Tensor t = torch::arange(1000, torch::kFloat32);
  ASSERT_TRUE(c.AllreduceSum(t).ok());
  EXPECT_TRUE(torch::equal(t, torch::arange(1000, torch::kFloat32) * c.size()));
  EXPECT_TRUE(c.Barrier().ok());
}

TEST(MpiCollectiveTest, BadRootIsAStatus) {
  float x = 0;
  EXPECT_EQ(g_collective->Broadcast(&x, 1, g_collective->size()).code(),
            StatusCode::kInvalidArgument);
}

TEST(MpiCollectiveTest, AllRanksOkNamesTheLowestFailingRank) {
  MpiCollective& c = *g_collective;
  int first = -2;
  Status comm;
  EXPECT_TRUE(AllRanksOk(c, Status::Ok(), &first, &comm));
  const bool fail_here = c.rank() == c.size() - 1;
  EXPECT_FALSE(AllRanksOk(c, fail_here ? Status::NotFound("x") : Status::Ok(), &first, &comm));
  EXPECT_EQ(first, c.size() - 1);
}

}  // namespace
}  // namespace dljob::trainer

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto env = dljob::trainer::MpiEnvironment::Create(&argc, &argv);
  if (!env.ok()) return 1;
  auto collective = dljob::trainer::MpiCollective::Create(MPI_COMM_WORLD);
  if (!collective.ok()) return 1;
  dljob::trainer::g_collective = collective->get();
  if ((*collective)->rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  // Every rank must agree on the outcome, so a failure on rank 1 fails the ctest test.
  float any = static_cast<float>(failed != 0);
  if (!(*collective)->AllreduceSum(&any, 1).ok()) return 1;
  dljob::trainer::g_collective = nullptr;
  return any > 0 ? 1 : 0;
}
