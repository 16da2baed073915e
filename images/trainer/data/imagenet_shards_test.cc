// --data_name=imagenet end to end on a tiny dataset: a JPEG tree packed into record shards (as
// `dljob data pack` does), read back through ImagenetShardSource, and two training steps of a
// small model on it.
#include "images/trainer/data/imagenet_shards.h"

#include <cmath>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/loopback_collective.h"
#include "images/trainer/data/training_data.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/trainer.h"
#include "storage/pack.h"
#include "storage/testing/test_data.h"
#include "testing/command.h"

namespace dljob::trainer {
namespace {

class ImagenetShardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // 3 classes x 6 images in 2 shards: 18 samples.
    storage::testdata::WriteJpegTree(dir_.path() + "/src", {"cat", "dog", "eel"}, 6);
    storage::PackOptions pack;
    pack.shard.max_records_per_shard = 10;
    Result<storage::PackResult> packed = storage::PackDataset(dir_.path() + "/src", data(), pack);
    ASSERT_TRUE(packed.ok()) << packed.status().message();
  }
  std::string data() const { return dir_.path() + "/data"; }

  ImagenetShardOptions Options() const {
    ImagenetShardOptions o;
    o.data_dir = data();
    o.input_shape = {3, 32, 40};
    o.num_classes = 10;
    o.batch_size = 4;
    o.seed = 3;
    o.threads = 2;
    return o;
  }

  static std::unique_ptr<ImagenetShardSource> Open(const ImagenetShardOptions& o) {
    Result<std::unique_ptr<ImagenetShardSource>> source = ImagenetShardSource::Open(o);
    EXPECT_TRUE(source.ok()) << source.status().message();
    return source.ok() ? std::move(*source) : nullptr;
  }

  dljob::testing::TempDir dir_;
};

TEST_F(ImagenetShardsTest, BatchesHaveTheModelInputShapeAndTheClassLabels) {
  std::unique_ptr<ImagenetShardSource> source = Open(Options());
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->num_samples(), 18u);
  EXPECT_EQ(source->classes(), (std::vector<std::string>{"cat", "dog", "eel"}));
  EXPECT_EQ(source->steps_per_epoch(), 4);  // 18 / 4, the short batch dropped
  std::map<int64_t, int> per_label;
  for (int64_t step = 0; step < source->steps_per_epoch(); ++step) {
    Batch b = source->Get(0, step);
    ASSERT_EQ(b.images.sizes(), (std::vector<int64_t>{4, 3, 32, 40}));
    ASSERT_EQ(b.images.scalar_type(), torch::kFloat32);
    ASSERT_EQ(b.labels.sizes(), (std::vector<int64_t>{4}));
    ASSERT_EQ(b.labels.scalar_type(), torch::kInt64);
    EXPECT_TRUE(torch::isfinite(b.images).all().item<bool>());
    // Normalised: values around zero, not raw bytes.
    EXPECT_LT(b.images.abs().max().item<float>(), 3.0f);
    EXPECT_GT(b.images.std().item<float>(), 0.05f);
    for (int64_t i = 0; i < 4; ++i) ++per_label[b.labels[i].item<int64_t>()];
  }
  // 16 of the 18 samples, each at most once: no class more than its 6 images.
  int total = 0;
  for (const auto& [label, n] : per_label) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 3);
    EXPECT_LE(n, 6) << "label " << label;
    total += n;
  }
  EXPECT_EQ(total, 16);
  // The next epoch follows on, in a different order.
  Batch next = source->Get(1, 0);
  EXPECT_EQ(next.images.size(0), 4);
}

TEST_F(ImagenetShardsTest, ResumingAtAStepGivesTheBatchesOfTheUninterruptedRun) {
  std::unique_ptr<ImagenetShardSource> straight = Open(Options());
  ASSERT_NE(straight, nullptr);
  std::vector<Batch> run;
  for (int64_t step = 0; step < 4; ++step) run.push_back(straight->Get(0, step));
  for (int64_t step = 0; step < 4; ++step) run.push_back(straight->Get(1, step));

  std::unique_ptr<ImagenetShardSource> resumed = Open(Options());  // as after a checkpoint
  ASSERT_NE(resumed, nullptr);
  for (int64_t i = 6; i < 8; ++i) {
    Batch b = resumed->Get(1, i - 4);
    EXPECT_TRUE(torch::equal(b.images, run[i].images)) << "step " << i;
    EXPECT_TRUE(torch::equal(b.labels, run[i].labels)) << "step " << i;
  }
  // Out of sequence (back to epoch 0) reopens the split.
  Batch again = resumed->Get(0, 1);
  EXPECT_TRUE(torch::equal(again.images, run[1].images));
  // Epochs differ (new order and augmentation).
  EXPECT_FALSE(torch::equal(run[0].images, run[4].images));
}

TEST_F(ImagenetShardsTest, RanksReadDifferentSamplesInLockStep) {
  ImagenetShardOptions o = Options();
  o.world = 2;
  o.batch_size = 3;
  o.rank = 0;
  std::unique_ptr<ImagenetShardSource> r0 = Open(o);
  o.rank = 1;
  std::unique_ptr<ImagenetShardSource> r1 = Open(o);
  ASSERT_NE(r0, nullptr);
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r0->steps_per_epoch(), 3);  // 9 samples per rank
  EXPECT_EQ(r1->steps_per_epoch(), 3);
  for (int64_t step = 0; step < 3; ++step) {
    EXPECT_FALSE(torch::equal(r0->Get(0, step).images, r1->Get(0, step).images)) << step;
  }
}

TEST_F(ImagenetShardsTest, ErrorsNameDataDirAndTheProblem) {
  ImagenetShardOptions o = Options();
  o.data_dir = dir_.path() + "/nothing-here";
  Result<std::unique_ptr<ImagenetShardSource>> missing = ImagenetShardSource::Open(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--data_dir=" + o.data_dir), std::string::npos)
      << missing.status().message();

  o = Options();
  o.num_classes = 2;
  Result<std::unique_ptr<ImagenetShardSource>> classes = ImagenetShardSource::Open(o);
  ASSERT_FALSE(classes.ok());
  EXPECT_NE(classes.status().message().find("3 classes"), std::string::npos)
      << classes.status().message();

  o = Options();
  o.input_shape = {2, 32, 32};
  EXPECT_FALSE(ImagenetShardSource::Open(o).ok());
}

TEST_F(ImagenetShardsTest, TrainsTwoStepsThroughMakeTrainingData) {
  TrainingDataOptions o;
  o.data_name = DataName::kImagenet;
  o.data_dir = data();
  o.input_shape = {1, 28, 28};  // mnist_mlp: grey 28x28, 10 classes
  o.num_classes = 10;
  o.batch_size = 4;
  o.seed = 1;
  o.loader_threads = 1;
  Result<TrainingData> data = MakeTrainingData(o);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->train_examples, 18);
  EXPECT_FALSE(data->test.has_value());
  EXPECT_NE(data->description.find("imagenet"), std::string::npos);

  torch::manual_seed(1);
  ModelPtr model = BuiltinModels().Find("mnist_mlp").value()->create();
  LoopbackCollective collective;
  std::ostringstream out;
  Reporter reporter(out, 0);
  TrainerOptions options;
  options.batch_size = 4;
  options.total_steps = 2;
  options.num_warmup_batches = 0;
  Trainer trainer(options, *model, collective, *data->train, nullptr, reporter);
  Result<TrainResult> result = trainer.Run();
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->losses.size(), 2u);
  for (double loss : result->losses) EXPECT_TRUE(std::isfinite(loss));
}

}  // namespace
}  // namespace dljob::trainer
