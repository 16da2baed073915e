#include "images/trainer/elastic.h"

#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/checkpoint.h"
#include "images/trainer/data/data_source.h"

namespace dljob::trainer {
namespace {

// A checkpoint of step 100 written on `world` ranks with per-rank batch `batch`.
CheckpointMeta SavedOn(int world, int64_t batch, int base_world = 0, int64_t resizes = 0) {
  CheckpointMeta m{100, 3, 7, world, batch, 42, "mnist_cnn"};
  m.sample_in_epoch = 7 * world * batch;
  m.base_world_size = base_world;
  m.resizes = resizes;
  return m;
}

RunSettings RunOn(int world, int64_t batch, bool scaling = false, double lr = 0.05) {
  return {world, batch, lr, scaling, 42, "mnist_cnn"};
}

TEST(ElasticResumeTest, TheSameWorldSizeResumesAsBefore) {
  Result<ResumePlan> plan = PlanResume(SavedOn(2, 16), RunOn(2, 16));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->batch_size, 16);
  EXPECT_EQ(plan->learning_rate, 0.05);
  EXPECT_EQ(plan->step, 100);
  EXPECT_EQ(plan->next, (DataPosition{3, 7 * 32}));
  EXPECT_EQ(plan->base_world_size, 2);
  EXPECT_EQ(plan->resizes, 0);
  EXPECT_FALSE(plan->resized(2));
  EXPECT_EQ(PlanResume(SavedOn(2, 16), RunOn(2, 32)).status().message(),
            "the checkpoint was written with --batch_size=16, this run has --batch_size=32");
  CheckpointMeta other_seed = SavedOn(2, 16);
  other_seed.seed = 1;
  EXPECT_EQ(PlanResume(other_seed, RunOn(2, 16)).status().message(),
            "the checkpoint was written with --seed=1, this run has --seed=42");
}

TEST(ElasticResumeTest, ByDefaultTheGlobalBatchIsKept) {
  Result<ResumePlan> up = PlanResume(SavedOn(2, 32), RunOn(4, 32));
  ASSERT_TRUE(up.ok()) << up.status().message();
  EXPECT_EQ(up->batch_size, 16);
  EXPECT_EQ(up->learning_rate, 0.05);
  EXPECT_EQ(up->next, (DataPosition{3, 7 * 64}));
  EXPECT_EQ(up->resizes, 1);
  EXPECT_EQ(up->base_world_size, 2);
  EXPECT_EQ(DescribeResize(*up, 4, 0.05),
            "resumed at step 100 on 4 ranks (checkpoint written on 2): global batch 64 kept, "
            "per-rank batch 32 → 16");
  // That checkpoint, rewritten on 4 ranks, restarted with the job's unchanged flags.
  for (int world : {4, 2, 1, 8, 64}) {
    Result<ResumePlan> again = PlanResume(SavedOn(4, 16, 2, 1), RunOn(world, 32));
    ASSERT_TRUE(again.ok()) << world << ": " << again.status().message();
    EXPECT_EQ(again->batch_size * world, 64) << world;
    EXPECT_EQ(again->resizes, world == 4 ? 1 : 2) << world;
    EXPECT_EQ(again->base_world_size, 2);
  }
  EXPECT_EQ(PlanResume(SavedOn(4, 16, 2, 1), RunOn(4, 16)).status().message(),
            "the checkpoint's global batch is 64 (4 ranks x 16), this run's --batch_size=16 on "
            "the job's first 2 ranks makes 32; pass the flags the job started with (and "
            "--elastic_lr_scaling if it ran with it)");
  EXPECT_EQ(PlanResume(SavedOn(2, 32), RunOn(3, 32)).status().message(),
            "the checkpoint's global batch of 64 (2 ranks x 32) does not divide among 3 ranks; "
            "resume on a rank count that divides 64, or pass --elastic_lr_scaling to keep the "
            "per-rank batch of 32 and scale the learning rate");
}

TEST(ElasticResumeTest, LrScalingKeepsThePerRankBatchAndScalesFromTheBaseWorldSize) {
  Result<ResumePlan> up = PlanResume(SavedOn(2, 16), RunOn(4, 16, true, 0.05));
  ASSERT_TRUE(up.ok()) << up.status().message();
  EXPECT_EQ(up->batch_size, 16);
  EXPECT_DOUBLE_EQ(up->learning_rate, 0.1);
  EXPECT_EQ(DescribeResize(*up, 4, 0.05),
            "resumed at step 100 on 4 ranks (checkpoint written on 2): per-rank batch 16 kept, "
            "global batch 32 → 64, learning rate 0.1 (--learning_rate=0.05 x 4 / 2 ranks)");
  // A chain of resizes 2 -> 3 -> 7 -> 5 -> 2: each rate comes from the flag and the base world
  // size, so coming back to 2 ranks gives exactly --learning_rate again.
  const double lr = 0.1;
  int world = 2;
  int64_t resizes = 0;
  for (int next : {3, 7, 5, 2}) {
    Result<ResumePlan> p = PlanResume(SavedOn(world, 16, 2, resizes), RunOn(next, 16, true, lr));
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->learning_rate, lr * next / 2) << next;
    EXPECT_EQ(p->resizes, resizes + 1);
    world = next;
    resizes = p->resizes;
  }
  EXPECT_EQ(PlanResume(SavedOn(2, 16, 2, 4), RunOn(2, 16, true, lr))->learning_rate, lr);
  EXPECT_EQ(PlanResume(SavedOn(2, 16), RunOn(4, 32, true)).status().message(),
            "the checkpoint was written with a per-rank batch of 16, this run has "
            "--batch_size=32 and --elastic_lr_scaling keeps the per-rank batch; pass "
            "--batch_size=16, or drop --elastic_lr_scaling to keep the global batch");
  EXPECT_EQ(ElasticLearningRate(0.05, false, 8, 2), 0.05);
  EXPECT_EQ(ElasticLearningRate(0.05, true, 8, 2), 0.2);
}

TEST(ElasticResumeTest, OlderManifestsResumeAtTheirStepsPosition) {
  const std::string old = R"({"format": "dljob-checkpoint/1", "step": 12, "epoch": 1,
    "step_in_epoch": 2, "world_size": 2, "batch_size": 16, "seed": 42, "model": "mnist_cnn",
    "tensors": ["param/w"], "data_file": "ckpt-000000012.pt", "data_bytes": 9,
    "data_crc32": 1})";
  Result<Manifest> m = ParseManifest(old);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->meta.sample_in_epoch, -1);
  EXPECT_EQ(m->meta.base_world_size, 0);
  EXPECT_EQ(m->meta.resizes, 0);
  Result<ResumePlan> plan = PlanResume(m->meta, RunOn(2, 16));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->next, (DataPosition{1, 64}));
  EXPECT_EQ(plan->base_world_size, 2);
  EXPECT_EQ(plan->resizes, 0);

  Manifest round;
  round.meta = SavedOn(4, 8, 2, 3);
  round.meta.sample_in_epoch = 40;
  round.tensor_names = {"param/w"};
  round.data_file = "ckpt-000000100.pt";
  Result<Manifest> back = ParseManifest(FormatManifest(round));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->meta, round.meta);
  round.meta.resizes = -1;
  EXPECT_EQ(ParseManifest(FormatManifest(round)).status().message(),
            "manifest: sample_in_epoch, base_world_size and resizes must not be negative");
}

// Every way a run of global batch g1 stopped after d steps can continue at global batch g2, with
// u1 and u2 usable entries per epoch: the batches of each epoch tile its order from 0 without
// gaps or overlaps, an epoch ends only where the next batch would not fit, LastStepOfEpoch agrees
// with EndsEpoch, and with the same batch and epoch every step is the uninterrupted run's.
TEST(StepScheduleTest, ResumedPositionsTileEachEpochExactly) {
  for (int64_t u1 = 1; u1 <= 24; ++u1) {
    for (int64_t u2 : {u1, u1 - 1, u1 + 2}) {
      for (int64_t g1 = 1; g1 <= u1; ++g1) {
        for (int64_t g2 = 1; g2 <= u2; ++g2) {
          const StepSchedule first(0, {0, 0}, g1, u1);
          for (int64_t d = 0; d <= 2 * first.steps_per_epoch() + 1; ++d) {
            const DataPosition next = d == 0 ? DataPosition{0, 0} : first.At(d + 1);
            const StepSchedule resumed(d, next, g2, u2);
            std::vector<int64_t> end(8, 0);  // covered prefix of each epoch
            for (int64_t s = 1; s <= d; ++s) {
              const DataPosition at = first.At(s);
              ASSERT_EQ(at.offset, end[at.epoch]);
              end[at.epoch] += g1;
            }
            const int64_t last = d + 2 * resumed.steps_per_epoch();
            for (int64_t s = d + 1; s <= last; ++s) {
              const DataPosition at = resumed.At(s);
              ASSERT_LT(at.epoch, 8);
              ASSERT_EQ(at.offset, end[at.epoch]) << u1 << " " << g1 << " " << g2 << " " << d;
              ASSERT_LE(at.offset + g2, u2);
              end[at.epoch] += g2;
              const bool ends = resumed.EndsEpoch(s);
              ASSERT_EQ(ends, resumed.At(s + 1).epoch != at.epoch);
              ASSERT_EQ(ends, at.offset + 2 * g2 > u2);
              if (ends) {
                ASSERT_EQ(resumed.LastStepOfEpoch(at.epoch), s);
              }
              if (g1 == g2 && u1 == u2) {
                ASSERT_EQ(at, first.At(s));
              }
            }
          }
        }
      }
    }
  }
}

// ShardedDataSource on W ranks: the step's batches of all ranks are exactly the next W x B
// entries of the epoch's order from any offset, and that order does not depend on W.
TEST(StepScheduleTest, ShardedBatchesAreTheOrdersNextEntriesOnAnyWorldSize) {
  torch::manual_seed(1);
  Dataset d;
  d.images = torch::randn({50, 1, 2, 2});
  d.labels = torch::randint(0, 10, {50}, torch::kInt64);
  d.num_classes = 10;
  storage::loader::SamplerOptions one;
  one.seed = 9;
  one.partition = storage::loader::Partition::kStrided;
  one.seeding = storage::loader::EpochSeeding::kSeedXorEpoch;
  const std::vector<uint64_t> order = storage::loader::Sampler({50}, one).GlobalOrder(2);
  for (int world : {1, 2, 3, 4, 5}) {
    for (int64_t batch : {1, 2, 3}) {
      std::vector<std::unique_ptr<ShardedDataSource>> ranks;
      for (int r = 0; r < world; ++r) {
        ranks.push_back(std::make_unique<ShardedDataSource>(d, world, r, batch, 9));
      }
      const int64_t global = world * batch;
      ASSERT_TRUE(ranks[0]->elastic());
      for (int64_t offset = 0; offset + global <= ranks[0]->epoch_samples(global); ++offset) {
        std::multiset<uint64_t> got;
        for (int r = 0; r < world; ++r) {
          Batch b = ranks[r]->GetAt(2, offset, global);
          for (int64_t i = 0; i < batch; ++i) got.insert(b.samples[i].item<int64_t>());
          EXPECT_TRUE(torch::equal(b.images, d.images.index_select(0, b.samples)));
        }
        const std::multiset<uint64_t> want(order.begin() + offset, order.begin() + offset + global);
        ASSERT_EQ(got, want) << world << " ranks x " << batch << " at " << offset;
      }
      // Get(epoch, step) is the step's offset, as it was: rank r's RankOrder, cut into batches.
      storage::loader::SamplerOptions mine = one;
      mine.world_size = world;
      mine.rank = world - 1;
      const std::vector<uint64_t> rank_order = storage::loader::Sampler({50}, mine).RankOrder(2);
      Batch b = ranks[world - 1]->Get(2, 1);
      for (int64_t i = 0; i < batch; ++i) {
        EXPECT_EQ(b.samples[i].item<int64_t>(), static_cast<int64_t>(rank_order[batch + i]));
      }
    }
  }
}

}  // namespace
}  // namespace dljob::trainer
