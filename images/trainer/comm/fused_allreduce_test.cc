#include "images/trainer/comm/fused_allreduce.h"

#include <numeric>

#include <gtest/gtest.h>

#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/loopback_collective.h"

namespace dljob::trainer {
namespace {

struct PlanCase {
  const char* name;
  std::vector<size_t> counts;
  size_t capacity;
  std::vector<Bucket> want;
};

TEST(PlanBucketsTest, Table) {
  const std::vector<PlanCase> cases = {
      {"empty", {}, 10, {}},
      {"all fit", {3, 3, 4}, 10, {{0, 3, 10, false}}},
      {"split at capacity", {3, 3, 5}, 10, {{0, 2, 6, false}, {2, 3, 5, false}}},
      {"oversized in the middle",
       {2, 11, 2},
       10,
       {{0, 1, 2, false}, {1, 2, 11, true}, {2, 3, 2, false}}},
      {"fusion off", {2, 0, 3}, 0, {{0, 1, 2, true}, {1, 2, 0, false}, {2, 3, 3, true}}},
      {"zero-length joins", {4, 0, 0, 6}, 10, {{0, 4, 10, false}}},
      {"exactly capacity", {10, 1}, 10, {{0, 1, 10, false}, {1, 2, 1, false}}},
  };
  for (const PlanCase& c : cases) {
    EXPECT_EQ(PlanBuckets(c.counts, c.capacity), c.want) << c.name;
  }
  // Tensors of at least `in_place_from` elements are reduced where they lie.
  const std::vector<Bucket> want = {{0, 2, 3, false}, {2, 3, 5, true}, {3, 5, 5, false}};
  EXPECT_EQ(PlanBuckets({1, 2, 5, 4, 1}, 10, 5), want);
}

// Tensors of the given sizes with distinct values (exact in float).
std::vector<std::vector<float>> MakeTensors(const std::vector<size_t>& counts) {
  std::vector<std::vector<float>> tensors;
  float next = 1;
  for (size_t n : counts) {
    std::vector<float> t(n);
    for (float& v : t) v = next++;
    tensors.push_back(std::move(t));
  }
  return tensors;
}

std::vector<FloatSpan> Spans(std::vector<std::vector<float>>& tensors) {
  std::vector<FloatSpan> spans;
  for (auto& t : tensors) spans.push_back({t.data(), t.size()});
  return spans;
}

TEST(FusedAllreducerTest, MeanOfIdenticalRanksGivesBackTheValues) {
  const std::vector<size_t> counts = {7, 0, 1, 33, 5, 64, 3, 0, 129, 2};
  for (size_t threshold_floats : {0, 1, 16, 64, 100, 1000}) {
    for (size_t segment_floats : {0, 1, 5, 16}) {
      for (int in_flight : {1, 3}) {
        IdenticalRanksCollective c(4);
        FusedAllreducer f(c, {threshold_floats * 4, segment_floats * 4, in_flight});
        auto tensors = MakeTensors(counts);
        const auto want = tensors;
        ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
        EXPECT_EQ(tensors, want) << threshold_floats << " " << segment_floats << " " << in_flight;
        ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());  // cached plan, reused buffer
        EXPECT_EQ(tensors, want);
      }
    }
  }
}

TEST(FusedAllreducerTest, FusionSendsFewerMessages) {
  std::vector<size_t> counts(500, 3);  // many small tensors
  counts.push_back(0);
  IdenticalRanksCollective fused(2);
  IdenticalRanksCollective unfused(2);
  FusedAllreducer on(fused, {size_t{1} << 20, size_t{1} << 20, 2});
  FusedAllreducer off(unfused, {0, size_t{1} << 20, 2});
  auto a = MakeTensors(counts);
  auto b = a;
  ASSERT_TRUE(on.AllreduceAverage(Spans(a)).ok());
  ASSERT_TRUE(off.AllreduceAverage(Spans(b)).ok());
  EXPECT_EQ(fused.allreduce_calls(), 1);
  EXPECT_EQ(unfused.allreduce_calls(), 500);  // the zero-length tensor sends nothing
  EXPECT_EQ(a, b);
  EXPECT_EQ(on.plan().size(), 1u);
}

TEST(FusedAllreducerTest, SegmentsAndInPlaceBuckets) {
  IdenticalRanksCollective c(2);
  // A 40-float buffer and 8-float segments: tensors 0-1 (30 floats) packed into one bucket,
  // tensor 2 (50 floats) in place. Segments of 40 floats keep the small tensors packed.
  FusedAllreducer f(c, {40 * 4, 40 * 4, 2});
  auto tensors = MakeTensors({10, 20, 50});
  const auto want = tensors;
  ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
  EXPECT_EQ(tensors, want);
  // 30 floats in one segment, 50 floats in two.
  EXPECT_EQ(c.allreduce_calls(), 3);
  ASSERT_EQ(f.plan().size(), 2u);
  EXPECT_TRUE(f.plan()[1].in_place);
}

TEST(FusedAllreducerTest, OneRankSendsNothingAndRejectsNull) {
  LoopbackCollective c;
  FusedAllreducer f(c, {});
  auto tensors = MakeTensors({5, 0, 9});
  const auto want = tensors;
  ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
  EXPECT_EQ(tensors, want);
  EXPECT_EQ(c.allreduce_calls(), 0);  // the mean over one rank is the tensor itself
  EXPECT_EQ(f.AllreduceAverage({{nullptr, 3}}).code(), StatusCode::kInvalidArgument);
}

TEST(FusedAllreducerTest, MeanOfThreeRanksIsWithinOneRounding) {
  IdenticalRanksCollective c(3);  // 1/3 is not exact: sum * (1/3) may differ from x in the last bit
  FusedAllreducer f(c, {64 * 4, 16 * 4, 1});
  auto tensors = MakeTensors({7, 40, 100, 3});
  const auto want = tensors;
  ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
  for (size_t t = 0; t < want.size(); ++t) {
    for (size_t i = 0; i < want[t].size(); ++i) {
      EXPECT_NEAR(tensors[t][i], want[t][i], 1e-6 * want[t][i]) << t << " " << i;
    }
  }
}

TEST(FusedAllreducerTest, BucketByBucketEqualsAllAtOnce) {
  IdenticalRanksCollective c(2);
  FusedAllreducer f(c, {40 * 4, 16 * 4, 1});
  auto tensors = MakeTensors({10, 5, 50, 3, 0, 8});
  const auto want = tensors;
  std::vector<size_t> counts;
  for (auto& t : tensors) counts.push_back(t.size());
  const std::vector<Bucket>& plan = f.Plan(counts);
  ASSERT_EQ(plan.size(), 3u);  // {10, 5}, {50} in place (a segment or longer), {3, 0, 8}
  // Any order works for one process; ranks must agree on it.
  for (size_t i : {2u, 0u, 1u}) ASSERT_TRUE(f.ReduceBucket(i, Spans(tensors)).ok()) << i;
  EXPECT_EQ(tensors, want);
  EXPECT_EQ(c.allreduce_calls(), 1 + 4 + 1);  // 50 floats in 16-float segments: 4
  EXPECT_EQ(f.ReduceBucket(3, Spans(tensors)).code(), StatusCode::kInvalidArgument);
  auto wrong = MakeTensors({10, 6, 50, 3, 0, 8});
  EXPECT_EQ(f.ReduceBucket(0, Spans(wrong)).code(), StatusCode::kInvalidArgument);
}

// average = false: the plain sum (3 identical ranks: every value times 3, exact for these
// integers, where the mean would give the values back), for every layout.
TEST(FusedAllreducerTest, SumOfIdenticalRanksIsTheValueTimesTheWorld) {
  const std::vector<size_t> counts = {7, 0, 1, 33, 5, 64, 3, 0, 129, 2};
  for (size_t threshold_floats : {0, 1, 16, 64, 100, 1000}) {
    for (size_t segment_floats : {0, 1, 5, 16}) {
      for (int in_flight : {1, 3}) {
        IdenticalRanksCollective c(3);
        FusionOptions options{threshold_floats * 4, segment_floats * 4, in_flight};
        options.average = false;
        FusedAllreducer f(c, options);
        auto tensors = MakeTensors(counts);
        auto want = tensors;
        for (int round = 0; round < 2; ++round) {  // the second reuses the plan and buffer
          for (auto& t : want) {
            for (float& v : t) v *= 3;
          }
          ASSERT_TRUE(f.Allreduce(Spans(tensors)).ok());
          ASSERT_EQ(tensors, want) << threshold_floats << " " << segment_floats << " " << in_flight
                                   << " round " << round;
        }
      }
    }
  }
}

TEST(FusedAllreducerTest, SumReducesInPlaceBucketsInOneCallAndKeepsPackedSegments) {
  // A 40-float buffer, 8-float segments: {5, 2} packed (7 floats, one segment), 50 in place
  // (segmented into 7 calls when averaging, one call when summing), {3, 6} packed (9 floats:
  // two segments either way).
  for (bool average : {true, false}) {
    for (int in_flight : {1, 2}) {
      IdenticalRanksCollective c(2);
      FusionOptions options{40 * 4, 8 * 4, in_flight};
      options.average = average;
      FusedAllreducer f(c, options);
      auto tensors = MakeTensors({5, 2, 50, 3, 6});
      auto want = tensors;
      if (!average) {
        for (auto& t : want) {
          for (float& v : t) v *= 2;
        }
      }
      ASSERT_TRUE(f.AllreduceAverage(Spans(tensors)).ok());
      EXPECT_EQ(tensors, want) << average;
      const std::vector<Bucket> plan = {{0, 2, 7, false}, {2, 3, 50, true}, {3, 5, 9, false}};
      EXPECT_EQ(f.plan(), plan);
      EXPECT_EQ(c.allreduce_calls(), average ? 1 + 7 + 2 : 1 + 1 + 2) << average;
      EXPECT_EQ(c.allreduce_floats(), 7 + 50 + 9);
    }
  }
}

TEST(FusedAllreducerTest, SumBucketByBucketAndOneRank) {
  IdenticalRanksCollective c(4);
  FusionOptions options{40 * 4, 16 * 4, 1};
  options.average = false;
  FusedAllreducer f(c, options);
  auto tensors = MakeTensors({10, 5, 50, 3, 0, 8});
  auto want = tensors;
  for (auto& t : want) {
    for (float& v : t) v *= 4;
  }
  std::vector<size_t> counts;
  for (auto& t : tensors) counts.push_back(t.size());
  ASSERT_EQ(f.Plan(counts).size(), 3u);
  for (size_t i : {2u, 0u, 1u}) ASSERT_TRUE(f.ReduceBucket(i, Spans(tensors)).ok()) << i;
  EXPECT_EQ(tensors, want);
  EXPECT_EQ(c.allreduce_calls(), 1 + 1 + 1);  // the in-place 50 floats whole

  LoopbackCollective one;  // the sum over one rank is the tensor itself: nothing sent
  FusedAllreducer single(one, options);
  auto alone = MakeTensors({5, 0, 90});
  const auto same = alone;
  ASSERT_TRUE(single.Allreduce(Spans(alone)).ok());
  EXPECT_EQ(alone, same);
  EXPECT_EQ(one.allreduce_calls(), 0);
}

TEST(LoopbackCollectiveTest, AllgatherCopiesAndStartWaitPair) {
  LoopbackCollective c;
  const float send[3] = {1, 2, 3};
  float recv[3] = {0, 0, 0};
  ASSERT_TRUE(c.Allgather(send, 3, recv).ok());
  EXPECT_EQ(recv[2], 3.0f);
  EXPECT_TRUE(c.Allgather(nullptr, 0, nullptr).ok());
  float data[2] = {4, 5};
  Result<uint64_t> a = c.StartAllreduceSum(data, 2);
  Result<uint64_t> b = c.StartAllreduceSum(data, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(c.Wait(*b).ok());
  EXPECT_TRUE(c.Wait(*a).ok());
  EXPECT_EQ(c.Wait(*a).code(), StatusCode::kInvalidArgument);  // waited for once only
  EXPECT_EQ(data[1], 5.0f);
}

}  // namespace
}  // namespace dljob::trainer
