// Runs under `mpirun -np N` (registered with ctest as trainer.mpi_collective_2ranks and
// trainer.mpi_collective_4ranks). Every rank runs every test; only rank 0 prints gtest's report,
// and the exit code is non-zero if any rank failed. Values are small integers, so every sum is
// exact in float and results are compared with a locally computed reference by equality (the fp16
// fusion test, whose values are not exact in half, within the half roundings instead).
#include "images/trainer/comm/mpi_collective.h"

#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/half.h"
#include "images/trainer/comm/mpi_environment.h"

namespace dljob::trainer {
namespace {

MpiCollective* g_collective = nullptr;  // set in main for the duration of RUN_ALL_TESTS
MpiCollective* g_segmented = nullptr;   // 64-byte segments, 3 in flight
MpiCollective* g_blocking = nullptr;    // 64-byte segments, blocking

// Rank r's value at element i of tensor t, and the sum over all ranks.
float Value(int rank, size_t t, size_t i) {
  return static_cast<float>((i * 7 + t * 13) % 101) + static_cast<float>(rank) * 1000.0f;
}
float SumOverRanks(int world, size_t t, size_t i) {
  float sum = 0;
  for (int r = 0; r < world; ++r) sum += Value(r, t, i);
  return sum;
}

std::vector<std::vector<float>> RankTensors(int rank, const std::vector<size_t>& counts) {
  std::vector<std::vector<float>> tensors;
  for (size_t t = 0; t < counts.size(); ++t) {
    std::vector<float> v(counts[t]);
    for (size_t i = 0; i < v.size(); ++i) v[i] = Value(rank, t, i);
    tensors.push_back(std::move(v));
  }
  return tensors;
}

// Expects tensors[t][i] == SumOverRanks(t, i) / divisor.
void ExpectSums(const std::vector<std::vector<float>>& tensors, int world, float divisor) {
  for (size_t t = 0; t < tensors.size(); ++t) {
    for (size_t i = 0; i < tensors[t].size(); ++i) {
      ASSERT_EQ(tensors[t][i], SumOverRanks(world, t, i) / divisor)
          << "tensor " << t << " [" << i << "]";
    }
  }
}

TEST(MpiCollectiveTest, AllreduceOddSizesZeroLengthAndSegmented) {
  for (MpiCollective* c : {g_collective, g_segmented, g_blocking}) {
    // 1 << 20 + 13 floats is past the default 4 MB segment, so every collective segments it.
    auto tensors = RankTensors(c->rank(), {1, 0, 3, 17, 1001, (size_t{1} << 20) + 13});
    for (auto& t : tensors) ASSERT_TRUE(c->AllreduceSum(t.data(), t.size()).ok());
    ExpectSums(tensors, c->size(), 1.0f);
  }
  EXPECT_TRUE(g_collective->AllreduceSum(nullptr, 0).ok());
}

TEST(MpiCollectiveTest, ManySmallTensors) {
  MpiCollective& c = *g_collective;
  std::vector<size_t> counts(500);
  for (size_t t = 0; t < counts.size(); ++t) counts[t] = t % 5;  // includes zero-length
  auto tensors = RankTensors(c.rank(), counts);
  for (auto& t : tensors) ASSERT_TRUE(c.AllreduceSum(t.data(), t.size()).ok());
  ExpectSums(tensors, c.size(), 1.0f);
}

TEST(MpiCollectiveTest, StartAndWaitInAnyOrder) {
  MpiCollective& c = *g_collective;
  auto tensors = RankTensors(c.rank(), {5, 0, 300});
  std::vector<uint64_t> ids;
  for (auto& t : tensors) {
    Result<uint64_t> id = c.StartAllreduceSum(t.data(), t.size());
    ASSERT_TRUE(id.ok());
    ids.push_back(*id);
  }
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) ASSERT_TRUE(c.Wait(*it).ok());
  ExpectSums(tensors, c.size(), 1.0f);
  EXPECT_EQ(c.Wait(ids[0]).code(), StatusCode::kInvalidArgument);
}

TEST(MpiCollectiveTest, AllgatherPlacesEachRanksBlock) {
  MpiCollective& c = *g_collective;
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{4099}}) {
    std::vector<float> send(count);
    for (size_t i = 0; i < count; ++i) send[i] = Value(c.rank(), 0, i);
    std::vector<float> recv(count * static_cast<size_t>(c.size()), -1.0f);
    ASSERT_TRUE(c.Allgather(send.data(), count, recv.data()).ok());
    for (int r = 0; r < c.size(); ++r) {
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(recv[static_cast<size_t>(r) * count + i], Value(r, 0, i)) << r << " " << i;
      }
    }
  }
}

// MPI_BYTE: odd lengths, and bytes that would be NaN bit patterns as floats, arrive unchanged.
TEST(MpiCollectiveTest, AllgatherBytesPlacesEachRanksBytes) {
  MpiCollective& c = *g_collective;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{4099}}) {
    std::vector<unsigned char> send(bytes);
    for (size_t i = 0; i < bytes; ++i) send[i] = static_cast<unsigned char>(0xff - i - c.rank());
    std::vector<unsigned char> recv(bytes * static_cast<size_t>(c.size()), 0);
    ASSERT_TRUE(c.AllgatherBytes(send.data(), bytes, recv.data()).ok());
    for (int r = 0; r < c.size(); ++r) {
      for (size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(recv[static_cast<size_t>(r) * bytes + i],
                  static_cast<unsigned char>(0xff - i - r))
            << r << " " << i;
      }
    }
  }
}

TEST(MpiCollectiveTest, ZeroLengthBroadcast) {
  EXPECT_TRUE(g_collective->Broadcast(nullptr, 0, 0).ok());
}

TEST(FusedAllreducerMpiTest, MeanMatchesReferenceForEveryLayout) {
  std::vector<size_t> counts(500);
  for (size_t t = 0; t < counts.size(); ++t) counts[t] = (t * 37) % 23;  // many small, some 0
  counts.insert(counts.begin() + 100, 70001);  // larger than the small buffers: in place
  counts.push_back(5);
  const float world = static_cast<float>(g_collective->size());
  const std::vector<FusionOptions> layouts = {
      {},                       // defaults: one 64 MB bucket, 4 MB segments
      {0, size_t{2} << 20, 4},  // fusion off: one allreduce per tensor
      {4096, 64, 1},            // small buckets, tiny segments, no pipelining
      {4096, 1000, 3},          // segments across tensor boundaries, 3 in flight
      {size_t{1} << 20, 0, 2},  // each bucket whole
  };
  for (const FusionOptions& options : layouts) {
    FusedAllreducer fusion(*g_collective, options);
    for (int round = 0; round < 2; ++round) {  // the second round reuses the plan and buffer
      auto tensors = RankTensors(g_collective->rank(), counts);
      std::vector<FloatSpan> spans;
      for (auto& t : tensors) spans.push_back({t.data(), t.size()});
      ASSERT_TRUE(fusion.AllreduceAverage(spans).ok());
      ExpectSums(tensors, g_collective->size(), world);
    }
  }
}

// average = false: the exact element-wise sum, float and fp16 (small integers: exact in half
// too), for the same layouts; in-place buckets go in one call, packed ones in segments.
TEST(FusedAllreducerMpiTest, SumMatchesReferenceForEveryLayout) {
  std::vector<size_t> counts(300);
  for (size_t t = 0; t < counts.size(); ++t) counts[t] = (t * 37) % 23;  // many small, some 0
  counts.insert(counts.begin() + 100, 70001);  // larger than the small buffers: in place
  counts.push_back(5);
  const int world = g_collective->size();
  for (FusionOptions options : std::vector<FusionOptions>{
           {}, {0, size_t{2} << 20, 4}, {4096, 64, 1}, {4096, 1000, 3}, {size_t{1} << 20, 0, 2}}) {
    options.average = false;
    FusedAllreducer fusion(*g_collective, options);
    for (int round = 0; round < 2; ++round) {  // the second round reuses the plan and buffer
      auto tensors = RankTensors(g_collective->rank(), counts);
      std::vector<FloatSpan> spans;
      for (auto& t : tensors) spans.push_back({t.data(), t.size()});
      ASSERT_TRUE(fusion.Allreduce(spans).ok());
      ExpectSums(tensors, world, 1.0f);
    }
    options.fp16 = true;
    FusedAllreducer half(*g_collective, options);
    auto small = [](int rank, size_t t, size_t i) {
      return static_cast<float>((i * 7 + t * 13) % 101) - 50.0f + static_cast<float>(rank * 3);
    };
    std::vector<std::vector<float>> tensors;
    for (size_t t = 0; t < counts.size(); ++t) {
      std::vector<float> v(counts[t]);
      for (size_t i = 0; i < v.size(); ++i) v[i] = small(g_collective->rank(), t, i);
      tensors.push_back(std::move(v));
    }
    std::vector<FloatSpan> spans;
    for (auto& t : tensors) spans.push_back({t.data(), t.size()});
    ASSERT_TRUE(half.Allreduce(spans).ok());
    for (size_t t = 0; t < tensors.size(); ++t) {
      for (size_t i = 0; i < tensors[t].size(); ++i) {
        float want = 0;
        for (int r = 0; r < world; ++r) want += small(r, t, i);
        ASSERT_EQ(tensors[t][i], want) << "fp16 tensor " << t << " [" << i << "]";
      }
    }
  }
}

TEST(MpiCollectiveTest, ReduceSumLeavesTheSumOnTheRoot) {
  MpiCollective& c = *g_collective;
  for (int root : {0, c.size() - 1}) {
    auto tensors = RankTensors(c.rank(), {0, 1, 17, 4099});
    for (auto& t : tensors) ASSERT_TRUE(c.ReduceSum(t.data(), t.size(), root).ok());
    if (c.rank() == root) ExpectSums(tensors, c.size(), 1.0f);
  }
  float x = 0;
  EXPECT_EQ(c.ReduceSum(&x, 1, c.size()).code(), StatusCode::kInvalidArgument);
}

TEST(MpiCollectiveTest, ReduceScatterGivesEachRankItsBlockOfTheSum) {
  MpiCollective& c = *g_collective;
  const auto world = static_cast<size_t>(c.size());
  for (size_t block : {size_t{0}, size_t{1}, size_t{5}, size_t{1000}}) {
    std::vector<float> send(block * world);
    for (size_t i = 0; i < send.size(); ++i) send[i] = Value(c.rank(), 1, i);
    std::vector<float> recv(block, -1.0f);
    ASSERT_TRUE(c.ReduceScatterSum(send.data(), recv.data(), block).ok());
    for (size_t i = 0; i < block; ++i) {
      ASSERT_EQ(recv[i], SumOverRanks(c.size(), 1, static_cast<size_t>(c.rank()) * block + i))
          << block << " " << i;
    }
  }
}

// Halves whose sums over ranks are exact in half, so any order of additions gives the same bits.
TEST(MpiCollectiveTest, HalfAllreduceSumsHalves) {
  for (MpiCollective* c : {g_collective, g_blocking}) {  // whole, and in 64-byte segments
    for (size_t count : {size_t{0}, size_t{1}, size_t{31}, size_t{1000}}) {
      std::vector<uint16_t> data(count);
      for (size_t i = 0; i < count; ++i) {
        data[i] = FloatToHalf(static_cast<float>(i % 50) * 0.25f - static_cast<float>(c->rank()));
      }
      ASSERT_TRUE(c->AllreduceSumHalf(data.data(), count).ok());
      for (size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int r = 0; r < c->size(); ++r) {
          want += static_cast<float>(i % 50) * 0.25f - static_cast<float>(r);
        }
        ASSERT_EQ(HalfToFloat(data[i]), want) << count << " " << i;
      }
    }
  }
  // Overflow is infinity, as in half arithmetic.
  std::vector<uint16_t> big = {FloatToHalf(40000.0f)};
  ASSERT_TRUE(g_collective->AllreduceSumHalf(big.data(), 1).ok());
  EXPECT_EQ(big[0], 0x7c00);
}

TEST(FusedAllreducerMpiTest, Fp16MeanIsWithinHalfPrecisionOfTheFloatMean) {
  std::vector<size_t> counts(200);
  for (size_t t = 0; t < counts.size(); ++t) counts[t] = (t * 37) % 23;  // many small, some 0
  counts.insert(counts.begin() + 50, 70001);  // in place for the small buffers
  const int world = g_collective->size();
  // Rank r's value: a fraction, not exact in half, of mixed sign.
  auto value = [](int rank, size_t t, size_t i) {
    return (static_cast<float>((i * 7 + t * 13) % 101) - 50.0f) * 0.013f +
           static_cast<float>(rank) * 0.7f;
  };
  for (FusionOptions options : std::vector<FusionOptions>{
           {}, {0, size_t{2} << 20, 1}, {4096, 64, 1}, {4096, 1000, 3}, {size_t{1} << 20, 0, 2}}) {
    options.fp16 = true;
    FusedAllreducer fusion(*g_collective, options);
    std::vector<std::vector<float>> tensors;
    for (size_t t = 0; t < counts.size(); ++t) {
      std::vector<float> v(counts[t]);
      for (size_t i = 0; i < v.size(); ++i) v[i] = value(g_collective->rank(), t, i);
      tensors.push_back(std::move(v));
    }
    std::vector<FloatSpan> spans;
    for (auto& t : tensors) spans.push_back({t.data(), t.size()});
    ASSERT_TRUE(fusion.AllreduceAverage(spans).ok());
    for (size_t t = 0; t < tensors.size(); ++t) {
      for (size_t i = 0; i < tensors[t].size(); ++i) {
        float sum_abs = 0;
        float mean = 0;
        for (int r = 0; r < world; ++r) {
          mean += value(r, t, i);
          sum_abs += std::fabs(value(r, t, i));
        }
        mean /= static_cast<float>(world);
        // Each rank's value and each of the world-1 partial sums is rounded once to half.
        const float tolerance =
            sum_abs * static_cast<float>(2 * world) * 0x1p-11f / static_cast<float>(world);
        ASSERT_NEAR(tensors[t][i], mean, tolerance) << "tensor " << t << " [" << i << "]";
      }
    }
  }
}

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
  auto segmented = dljob::trainer::MpiCollective::Create(MPI_COMM_WORLD, {64, 3});
  auto blocking = dljob::trainer::MpiCollective::Create(MPI_COMM_WORLD, {64, 1});
  if (!blocking.ok()) return 1;
  dljob::trainer::g_blocking = blocking->get();
  if (!segmented.ok()) return 1;
  dljob::trainer::g_segmented = segmented->get();
  if ((*collective)->rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  // Every rank must agree on the outcome, so a failure on rank 1 fails the ctest test.
  float any = static_cast<float>(failed != 0);
  if (!(*collective)->AllreduceSum(&any, 1).ok()) return 1;
  dljob::trainer::g_collective = nullptr;
  dljob::trainer::g_segmented = nullptr;
  dljob::trainer::g_blocking = nullptr;
  return any > 0 ? 1 : 0;
}
