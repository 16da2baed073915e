// NcclCollective against reference sums on real MPI ranks, one CUDA device per rank. Needs a GPU
// per rank: without a CUDA device (no driver, or cudaGetDeviceCount returns 0) every test is
// skipped with the reason, so the suite passes on CPU-only machines.
#include "images/trainer/comm/nccl_collective.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "images/trainer/comm/builtin_backends.h"
#include "images/trainer/comm/half.h"
#include "images/trainer/comm/mpi_environment.h"

namespace dljob::trainer {

NcclCollective* g_nccl = nullptr;  // set in main when a device per rank exists
std::string g_skip_reason;         // why g_nccl is null

namespace {

class NcclCollectiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (g_nccl == nullptr) GTEST_SKIP() << g_skip_reason;
  }
};

// Rank r's value at index i; sums over ranks are exact in float for these sizes.
float Value(int rank, size_t i) { return static_cast<float>((rank + 1) * 1000 + i % 997); }

TEST_F(NcclCollectiveTest, AllreduceMatchesReferenceSumForOddSizes) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1023}, size_t{1} << 20}) {
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = Value(g_nccl->rank(), i);
    ASSERT_TRUE(g_nccl->AllreduceSum(data.data(), count).ok());
    for (size_t i = 0; i < count; ++i) {
      float expected = 0;
      for (int r = 0; r < g_nccl->size(); ++r) expected += Value(r, i);
      ASSERT_EQ(data[i], expected) << "count " << count << " index " << i;
    }
  }
}

TEST_F(NcclCollectiveTest, ManySmallAllreduces) {
  for (int t = 0; t < 200; ++t) {
    float x = static_cast<float>(g_nccl->rank() + t);
    ASSERT_TRUE(g_nccl->AllreduceSum(&x, 1).ok());
    const int n = g_nccl->size();
    EXPECT_EQ(x, static_cast<float>(n * (n - 1) / 2 + n * t));
  }
}

TEST_F(NcclCollectiveTest, BroadcastFromEveryRoot) {
  for (int root = 0; root < g_nccl->size(); ++root) {
    std::vector<float> data(1001, static_cast<float>(g_nccl->rank()));
    ASSERT_TRUE(g_nccl->Broadcast(data.data(), data.size(), root).ok());
    for (float v : data) ASSERT_EQ(v, static_cast<float>(root));
  }
  float x = 0;
  EXPECT_FALSE(g_nccl->Broadcast(&x, 1, g_nccl->size()).ok());
}

TEST_F(NcclCollectiveTest, AllgatherPlacesEachRanksBlock) {
  const size_t count = 333;
  std::vector<float> send(count);
  for (size_t i = 0; i < count; ++i) send[i] = Value(g_nccl->rank(), i);
  std::vector<float> recv(count * g_nccl->size(), -1);
  ASSERT_TRUE(g_nccl->Allgather(send.data(), count, recv.data()).ok());
  for (int r = 0; r < g_nccl->size(); ++r) {
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(recv[r * count + i], Value(r, i));
  }
}

TEST_F(NcclCollectiveTest, ReduceSumOnEveryRoot) {
  for (int root = 0; root < g_nccl->size(); ++root) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{4099}}) {
      std::vector<float> data(count);
      for (size_t i = 0; i < count; ++i) data[i] = Value(g_nccl->rank(), i);
      ASSERT_TRUE(g_nccl->ReduceSum(data.data(), count, root).ok());
      if (g_nccl->rank() != root) continue;
      for (size_t i = 0; i < count; ++i) {
        float expected = 0;
        for (int r = 0; r < g_nccl->size(); ++r) expected += Value(r, i);
        ASSERT_EQ(data[i], expected) << "root " << root << " index " << i;
      }
    }
  }
  float x = 0;
  EXPECT_EQ(g_nccl->ReduceSum(&x, 1, g_nccl->size()).code(), StatusCode::kInvalidArgument);
}

TEST_F(NcclCollectiveTest, ReduceScatterGivesEachRankItsBlock) {
  const size_t block = 257;
  const auto n = static_cast<size_t>(g_nccl->size());
  std::vector<float> send(block * n);
  for (size_t i = 0; i < send.size(); ++i) send[i] = Value(g_nccl->rank(), i);
  std::vector<float> recv(block, -1);
  ASSERT_TRUE(g_nccl->ReduceScatterSum(send.data(), recv.data(), block).ok());
  for (size_t i = 0; i < block; ++i) {
    const size_t at = static_cast<size_t>(g_nccl->rank()) * block + i;
    float expected = 0;
    for (int r = 0; r < g_nccl->size(); ++r) expected += Value(r, at);
    ASSERT_EQ(recv[i], expected) << i;
  }
}

// Quarter steps below 64 are exact in half, and so are their sums over a few ranks.
TEST_F(NcclCollectiveTest, HalfAllreduceSumsHalves) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{1001}}) {
    std::vector<uint16_t> data(count);
    for (size_t i = 0; i < count; ++i) {
      const float rank = static_cast<float>(g_nccl->rank());
      data[i] = FloatToHalf(static_cast<float>(i % 50) * 0.25f + rank);
    }
    ASSERT_TRUE(g_nccl->AllreduceSumHalf(data.data(), count).ok());
    for (size_t i = 0; i < count; ++i) {
      float expected = 0;
      for (int r = 0; r < g_nccl->size(); ++r) {
        expected += static_cast<float>(i % 50) * 0.25f + static_cast<float>(r);
      }
      ASSERT_EQ(HalfToFloat(data[i]), expected) << i;
    }
  }
}

TEST_F(NcclCollectiveTest, BarrierAndTensorForms) {
  ASSERT_TRUE(g_nccl->Barrier().ok());
  torch::Tensor t = torch::full({3, 5}, static_cast<float>(g_nccl->rank() + 1));
  ASSERT_TRUE(g_nccl->AllreduceSum(t).ok());
  const int n = g_nccl->size();
  EXPECT_TRUE(torch::equal(t, torch::full({3, 5}, static_cast<float>(n * (n + 1) / 2))));
}

}  // namespace
}  // namespace dljob::trainer

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto env = dljob::trainer::MpiEnvironment::Create(&argc, &argv);
  if (!env.ok()) return 1;
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank sees the same devices (one node), so all ranks skip or none does.
  const dljob::trainer::CudaDevices cuda = dljob::trainer::ProbeCudaDevices();
  std::unique_ptr<dljob::trainer::NcclCollective> nccl;
  if (cuda.count == 0) {
    dljob::trainer::g_skip_reason = "no CUDA device: " + cuda.error;
  } else if (cuda.count < size) {
    dljob::trainer::g_skip_reason = std::to_string(size) + " ranks need " + std::to_string(size) +
                                    " CUDA devices, found " + std::to_string(cuda.count);
  } else {
    auto created = dljob::trainer::NcclCollective::Create(
        MPI_COMM_WORLD, dljob::trainer::LocalRankFromEnvironment());
    if (!created.ok()) {
      std::fprintf(stderr, "NcclCollective::Create: %s\n", created.status().message().c_str());
      return 1;
    }
    nccl = std::move(*created);
    dljob::trainer::g_nccl = nccl.get();
  }
  if (rank != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  // Every rank must agree on the outcome, so a failure on rank 1 fails the ctest test.
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any = 0;
  if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
  dljob::trainer::g_nccl = nullptr;
  nccl.reset();
  return any;
}
