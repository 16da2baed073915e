// Runs under `mpirun -np N` (trainer.hierarchical_collective_2ranks and _4ranks): every layout of
// simulated nodes that divides N (N x 1, 2 x 2, 1 x N), plus the shared-memory split (one node
// here), is checked against a locally computed reference sum; values are small integers, so the
// sums are exact and compared by equality. The first tests use fakes and need no MPI traffic.
// Every rank runs every test; only rank 0 prints, and any rank's failure fails the run.
#include "images/trainer/comm/hierarchical_collective.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/mpi_collective.h"
#include "images/trainer/comm/mpi_environment.h"

namespace dljob::trainer {
namespace {

std::vector<std::unique_ptr<Collective>>* g_layouts = nullptr;  // set in main
MpiCollective* g_world = nullptr;

// The ranks of one node, all holding the same data: rank r's reduce-scatter block is `size()`
// times block r of the data, so the allgather of every rank's block is `size()` times all of it.
// (IdenticalRanksCollective plays rank 0 only, whose block alone would be gathered everywhere.)
// It ignores what is sent to the allgather, so it models a single node: the cross-node stage is
// checked by the MPI tests below (2x2, 4x1).
class IdenticalDataNode : public IdenticalRanksCollective {
 public:
  using IdenticalRanksCollective::IdenticalRanksCollective;
  Status ReduceScatterSum(const float* send, float* recv, size_t block) override {
    const size_t total = block * static_cast<size_t>(size());
    node_sum_.assign(send, send + total);
    for (float& v : node_sum_) v *= static_cast<float>(size());
    std::copy_n(node_sum_.begin(), block, recv);
    return Status::Ok();
  }
  Status Allgather(const float* /*send*/, size_t count, float* recv) override {
    if (node_sum_.size() != count * static_cast<size_t>(size())) {
      return Status::Internal("fake: allgather of a block the reduce-scatter did not make");
    }
    std::copy(node_sum_.begin(), node_sum_.end(), recv);
    return Status::Ok();
  }

 private:
  std::vector<float> node_sum_;
};

TEST(HierarchicalCollectiveFakeTest, PadsAndChunksOddSizes) {
  // 1 node x 3 ranks of identical values: every sum is 3x. Chunks of 5 floats, so counts
  // cross chunk boundaries and most chunks are padded to a multiple of 3.
  HierarchicalCollective c(std::make_unique<IdenticalRanksCollective>(3),
                           std::make_unique<IdenticalDataNode>(3),
                           std::make_unique<IdenticalRanksCollective>(1), 5);
  EXPECT_EQ(c.name(), "identical-ranks-hierarchical(1x3)");
  EXPECT_EQ(c.size(), 3);
  for (size_t count : {0, 1, 2, 3, 4, 5, 6, 7, 11, 13, 100}) {
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(i) - 3.0f;
    ASSERT_TRUE(c.AllreduceSum(data.data(), count).ok());
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(data[i], (static_cast<float>(i) - 3.0f) * 3) << count << " " << i;
    }
  }
  EXPECT_EQ(c.AllreduceSum(nullptr, 3).code(), StatusCode::kInvalidArgument);
}

TEST(HierarchicalCollectiveFakeTest, ErrorsSayWhichStageFailed) {
  auto cross = std::make_unique<IdenticalRanksCollective>(2);
  cross->FailFrom(0);
  HierarchicalCollective c(std::make_unique<IdenticalRanksCollective>(4),
                           std::make_unique<IdenticalDataNode>(2), std::move(cross));
  std::vector<float> data(10, 1.0f);
  Status s = c.AllreduceSum(data.data(), data.size());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("cross-node allreduce"), std::string::npos) << s.message();
}

float Value(int rank, size_t t, size_t i) {
  return static_cast<float>((i * 7 + t * 13) % 101) + static_cast<float>(rank) * 1000.0f;
}
float SumOverRanks(int world, size_t t, size_t i) {
  float sum = 0;
  for (int r = 0; r < world; ++r) sum += Value(r, t, i);
  return sum;
}

TEST(HierarchicalCollectiveMpiTest, AllreduceMatchesTheReferenceInEveryLayout) {
  // 1 << 20 + 13 floats is past one 4 MB chunk.
  const std::vector<size_t> counts = {1, 0, 2, 3, 5, 17, 1001, 4096, (size_t{1} << 20) + 13};
  for (auto& c : *g_layouts) {
    for (size_t t = 0; t < counts.size(); ++t) {
      std::vector<float> data(counts[t]);
      for (size_t i = 0; i < data.size(); ++i) data[i] = Value(c->rank(), t, i);
      ASSERT_TRUE(c->AllreduceSum(data.data(), data.size()).ok()) << c->name();
      for (size_t i = 0; i < data.size(); ++i) {
        ASSERT_EQ(data[i], SumOverRanks(c->size(), t, i)) << c->name() << " " << t << " " << i;
      }
    }
  }
}

TEST(HierarchicalCollectiveMpiTest, ManySmallTensors) {
  for (auto& c : *g_layouts) {
    for (size_t t = 0; t < 300; ++t) {
      std::vector<float> data(t % 7);
      for (size_t i = 0; i < data.size(); ++i) data[i] = Value(c->rank(), t, i);
      ASSERT_TRUE(c->AllreduceSum(data.data(), data.size()).ok());
      for (size_t i = 0; i < data.size(); ++i) {
        ASSERT_EQ(data[i], SumOverRanks(c->size(), t, i)) << c->name() << " " << t;
      }
    }
  }
}

TEST(HierarchicalCollectiveMpiTest, OtherOperationsGoToTheWholeWorld) {
  for (auto& c : *g_layouts) {
    EXPECT_EQ(c->rank(), g_world->rank());
    EXPECT_EQ(c->size(), g_world->size());
    std::vector<float> send = {Value(c->rank(), 0, 0), Value(c->rank(), 0, 1)};
    std::vector<float> recv(2 * static_cast<size_t>(c->size()));
    ASSERT_TRUE(c->Allgather(send.data(), 2, recv.data()).ok());
    for (int r = 0; r < c->size(); ++r) {
      EXPECT_EQ(recv[2 * static_cast<size_t>(r)], Value(r, 0, 0)) << c->name();
    }
    std::vector<float> b = {static_cast<float>(c->rank())};
    ASSERT_TRUE(c->Broadcast(b.data(), 1, c->size() - 1).ok());
    EXPECT_EQ(b[0], static_cast<float>(c->size() - 1));
    std::vector<float> reduced = {Value(c->rank(), 2, 0)};
    ASSERT_TRUE(c->ReduceSum(reduced.data(), 1, 0).ok());
    if (c->rank() == 0) {
      EXPECT_EQ(reduced[0], SumOverRanks(c->size(), 2, 0));
    }
    EXPECT_TRUE(c->Barrier().ok());
  }
}

TEST(HierarchicalCollectiveMpiTest, FusedAllreducerAveragesOverIt) {
  std::vector<size_t> counts(300);
  for (size_t t = 0; t < counts.size(); ++t) counts[t] = (t * 37) % 23;
  counts.insert(counts.begin() + 100, 70001);
  for (auto& c : *g_layouts) {
    for (FusionOptions options : std::vector<FusionOptions>{{}, {4096, 1000, 1}, {0, 0, 1}}) {
      FusedAllreducer fusion(*c, options);
      std::vector<std::vector<float>> tensors;
      std::vector<FloatSpan> spans;
      for (size_t t = 0; t < counts.size(); ++t) {
        std::vector<float> v(counts[t]);
        for (size_t i = 0; i < v.size(); ++i) v[i] = Value(c->rank(), t, i);
        tensors.push_back(std::move(v));
      }
      for (auto& t : tensors) spans.push_back({t.data(), t.size()});
      ASSERT_TRUE(fusion.AllreduceAverage(spans).ok());
      const float world = static_cast<float>(c->size());
      for (size_t t = 0; t < tensors.size(); ++t) {
        for (size_t i = 0; i < tensors[t].size(); ++i) {
          // sum * (1/world) is exact for the power-of-two worlds this runs at.
          ASSERT_EQ(tensors[t][i], SumOverRanks(c->size(), t, i) / world)
              << c->name() << " " << t << " " << i;
        }
      }
    }
  }
}

TEST(HierarchicalCollectiveMpiTest, NamesSayNodesTimesRanksPerNode) {
  std::vector<std::string> names;
  for (auto& c : *g_layouts) names.push_back(c->name());
  const int n = g_world->size();
  // Simulated nodes of 1 and of all ranks; one real node (this machine) for the shared split.
  EXPECT_EQ(names[0], "mpi-hierarchical(1x" + std::to_string(n) + ")");
  EXPECT_EQ(names[1], "mpi-hierarchical(" + std::to_string(n) + "x1)");
  if (n == 4) {
    EXPECT_EQ(names[2], "mpi-hierarchical(2x2)");
  }
}

TEST(HierarchicalCollectiveMpiTest, ALocalSizeThatDoesNotDivideTheWorldIsAnError) {
  const int bad = g_world->size() + 1;
  auto c = MakeHierarchicalMpiCollective(MPI_COMM_WORLD, bad);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("--hierarchical_local_size=" + std::to_string(bad)),
            std::string::npos)
      << c.status().message();
  EXPECT_FALSE(MakeHierarchicalMpiCollective(MPI_COMM_WORLD, -1).ok());
}

}  // namespace
}  // namespace dljob::trainer

int main(int argc, char** argv) {
  using namespace dljob::trainer;
  ::testing::InitGoogleTest(&argc, argv);
  auto env = MpiEnvironment::Create(&argc, &argv);
  if (!env.ok()) return 1;
  auto world = MpiCollective::Create(MPI_COMM_WORLD);
  if (!world.ok()) return 1;
  const int size = (*world)->size();
  std::vector<std::unique_ptr<Collective>> layouts;
  for (int local : {0, 1, 2, 4}) {
    if (local > size || (local > 0 && size % local != 0)) continue;
    auto c = MakeHierarchicalMpiCollective(MPI_COMM_WORLD, local);
    if (!c.ok()) {
      std::fprintf(stderr, "local size %d: %s\n", local, c.status().message().c_str());
      return 1;
    }
    layouts.push_back(std::move(*c));
  }
  g_layouts = &layouts;
  g_world = world->get();
  if ((*world)->rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  } else {
    for (auto& c : layouts) std::printf("layout: %s\n", c->name().c_str());
  }
  int failed = RUN_ALL_TESTS();
  float any = static_cast<float>(failed != 0);
  if (!(*world)->AllreduceSum(&any, 1).ok()) return 1;
  g_layouts = nullptr;
  g_world = nullptr;
  layouts.clear();
  return any > 0 ? 1 : 0;
}
