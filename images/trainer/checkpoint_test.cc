#include "images/trainer/checkpoint.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/loopback_collective.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/trainer.h"
#include "images/trainer/training_state.h"

namespace dljob::trainer {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "dljob-ckpt-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Checkpoint Sample(int64_t step) {
    torch::manual_seed(step);
    Checkpoint c;
    c.meta = {step, step / 10, step % 10, 2, 16, 42, "mnist_cnn"};
    c.tensors = {{"param/fc.weight", torch::randn({3, 5})},
                 {"buffer/bn.num_batches_tracked", torch::tensor({step}, torch::kInt64)},
                 {"momentum/fc.weight", torch::randn({3, 5}) * 1e-30}};
    return c;
  }

  // One rank trains mnist_mlp (initialised with `init_seed`) on 80 fixed images, 5 steps per
  // epoch, for `steps` steps: saving every 4 steps into `store` and resuming from `resume` when
  // they are given, asking `stop` once a step when it is set. `model_out` gets the model and
  // `out`, when given, what the run printed.
  static TrainResult TrainMlp(uint64_t init_seed, int64_t steps, CheckpointStore* store,
                              const Checkpoint* resume, std::function<bool()> stop,
                              ModelPtr* model_out, std::string* out = nullptr) {
    torch::manual_seed(3);
    Dataset d;
    d.images = torch::randn({80, 1, 28, 28});
    d.labels = torch::randint(0, 10, {80}, torch::kInt64);
    d.num_classes = 10;
    torch::manual_seed(init_seed);
    ModelPtr model = BuiltinModels().Find("mnist_mlp").value()->create();
    LoopbackCollective collective;
    ShardedDataSource data(std::move(d), 1, 0, 16, 11);
    std::ostringstream text;
    Reporter reporter(text, 0);
    TrainerOptions o;
    o.batch_size = 16;
    o.total_steps = steps;
    o.num_warmup_batches = 0;
    o.seed = 5;
    o.model_name = "mnist_mlp";
    o.checkpoints = store;
    o.checkpoint_every = 4;
    o.resume_from = resume;
    o.stop_requested = std::move(stop);
    Result<TrainResult> r = Trainer(o, *model, collective, data, nullptr, reporter).Run();
    EXPECT_TRUE(r.ok()) << r.status().message();
    *model_out = model;
    if (out) *out = text.str();
    return r.ok() ? *r : TrainResult{};
  }

  std::string dir_;
};

void ExpectSame(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.meta, b.meta);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_EQ(a.tensors[i].second.scalar_type(), b.tensors[i].second.scalar_type());
    EXPECT_TRUE(torch::equal(a.tensors[i].second, b.tensors[i].second)) << a.tensors[i].first;
  }
}

TEST(CheckpointNamesTest, StepsRoundTripThroughFileNames) {
  EXPECT_EQ(CheckpointManifestName(120), "ckpt-000000120.manifest");
  EXPECT_EQ(CheckpointDataName(120), "ckpt-000000120.pt");
  EXPECT_EQ(StepOfManifestName("ckpt-000000120.manifest"), 120);
  EXPECT_EQ(StepOfManifestName("ckpt-1234567890.manifest"), 1234567890);
  EXPECT_EQ(StepOfManifestName(".ckpt-000000120.manifest.tmp"), std::nullopt);
  EXPECT_EQ(StepOfManifestName("ckpt-.manifest"), std::nullopt);
  EXPECT_EQ(StepOfManifestName("ckpt-12a.manifest"), std::nullopt);
  EXPECT_EQ(StepOfManifestName("ckpt-000000120.pt"), std::nullopt);
  EXPECT_EQ(StepOfDataName("ckpt-000000120.pt"), 120);
}

TEST(CheckpointNamesTest, PrunesAllButTheNewest) {
  EXPECT_EQ(StepsToPrune({30, 10, 50, 20, 40}, 2), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_TRUE(StepsToPrune({10, 20}, 2).empty());
  EXPECT_TRUE(StepsToPrune({10, 20}, 0).empty());
}

TEST(CheckpointNamesTest, ManifestRoundTripsAndNamesMissingFields) {
  Manifest m{{7, 0, 7, 4, 32, 9, "resnet50"},
             {"param/a", "momentum/a"},
             "ckpt-000000007.pt",
             123,
             0xdeadbeef};
  Result<Manifest> back = ParseManifest(FormatManifest(m));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->meta, m.meta);
  EXPECT_EQ(back->tensor_names, m.tensor_names);
  EXPECT_EQ(back->data_bytes, 123u);
  EXPECT_EQ(back->data_crc32, 0xdeadbeefu);
  std::string text = FormatManifest(m);
  text.replace(text.find("\"seed\""), 6, "\"sed\"");
  EXPECT_EQ(ParseManifest(text).status().message(), "manifest: field \"seed\" is missing");
  EXPECT_FALSE(ParseManifest("{\"format\": \"dljob-checkpoint/1\"").ok());  // truncated
  m.data_file = "../escape.pt";
  EXPECT_FALSE(ParseManifest(FormatManifest(m)).ok());
}

TEST(CheckpointDueTest, StepsSecondsTheLastStepAndAStop) {
  struct Case {
    CheckpointPolicy policy;
    int64_t step;
    double seconds;
    bool stopping;
    bool due;
  };
  const int64_t total = 100;
  for (const Case& c : {
           Case{{500, 0}, 7, 0.0, false, false},    // between intervals
           Case{{5, 0}, 10, 0.0, false, true},      // every 5 steps
           Case{{5, 0}, 11, 1e9, false, false},     // no time interval set
           Case{{0, 0}, 99, 0.0, false, false},     // 0: only the last step...
           Case{{0, 0}, 100, 0.0, false, true},     // ...which always saves
           Case{{0, 60}, 3, 59.9, false, false},    // not yet a minute
           Case{{0, 60}, 3, 60.0, false, true},     // a minute since the last save
           Case{{500, 60}, 500, 0.0, false, true},  // either interval
           Case{{500, 0}, 7, 0.0, true, true},      // a stop saves wherever it lands
           Case{{0, 0}, 1, 0.0, true, true},
       }) {
    EXPECT_EQ(CheckpointDue(c.policy, c.step, total, c.seconds, c.stopping), c.due)
        << "every " << c.policy.every_steps << " steps / " << c.policy.every_seconds << " s, step "
        << c.step << ", " << c.seconds << " s since, stopping " << c.stopping;
  }
}

TEST(CheckpointNamesTest, ResumeNeedsTheSameModelAndSeed) {
  const CheckpointMeta saved{100, 1, 40, 2, 16, 42, "mnist_cnn"};
  CheckpointMeta run{0, 0, 0, 4, 8, 42, "mnist_cnn"};  // world size and batch: elastic.h's rules
  EXPECT_TRUE(CheckResumable(saved, run).ok());
  run.seed = 7;
  EXPECT_EQ(CheckResumable(saved, run).message(),
            "the checkpoint was written with --seed=42, this run has --seed=7");
  run = {0, 0, 0, 2, 16, 42, "mnist_mlp"};
  EXPECT_EQ(CheckResumable(saved, run).message(),
            "the checkpoint was written with --model=mnist_cnn, this run has --model=mnist_mlp");
}

TEST_F(CheckpointTest, RoundTripsExactly) {
  CheckpointStore store(dir_ + "/new/sub", 3);
  ASSERT_TRUE(store.Prepare().ok());
  const Checkpoint saved = Sample(20);
  ASSERT_TRUE(store.Save(saved).ok());
  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> loaded = store.LoadLatest(&warnings);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_TRUE(loaded->has_value());
  ExpectSame(saved, **loaded);
  EXPECT_TRUE(warnings.empty());
  for (const auto& entry : fs::directory_iterator(dir_ + "/new/sub")) {  // no temporary files
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  }
}

TEST_F(CheckpointTest, EmptyDirectoryHasNoCheckpoint) {
  CheckpointStore store(dir_, 3);
  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> loaded = store.LoadLatest(&warnings);
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->has_value());
}

TEST_F(CheckpointTest, KeepsTheNewestK) {
  CheckpointStore store(dir_, 2);
  for (int64_t step : {10, 20, 30, 40}) ASSERT_TRUE(store.Save(Sample(step)).ok());
  EXPECT_EQ(store.ListSteps(), (std::vector<int64_t>{30, 40}));
  EXPECT_FALSE(fs::exists(dir_ + "/" + CheckpointDataName(20)));
}

TEST_F(CheckpointTest, TruncatedDataFallsBackToThePreviousCheckpoint) {
  CheckpointStore store(dir_, 3);
  ASSERT_TRUE(store.Save(Sample(10)).ok());
  ASSERT_TRUE(store.Save(Sample(20)).ok());
  const std::string data = dir_ + "/" + CheckpointDataName(20);
  fs::resize_file(data, fs::file_size(data) / 2);
  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> loaded = store.LoadLatest(&warnings);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  ExpectSame(Sample(10), **loaded);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("skipping checkpoint of step 20"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("truncated or corrupt"), std::string::npos) << warnings[0];
}

TEST_F(CheckpointTest, MissingManifestFallsBackToThePreviousCheckpoint) {
  CheckpointStore store(dir_, 3);
  ASSERT_TRUE(store.Save(Sample(10)).ok());
  ASSERT_TRUE(store.Save(Sample(20)).ok());
  fs::remove(dir_ + "/" + CheckpointManifestName(20));  // the save died before its manifest
  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> loaded = store.LoadLatest(&warnings);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->meta.step, 10);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("step 20"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("no manifest"), std::string::npos) << warnings[0];
}

TEST_F(CheckpointTest, GarbledManifestFallsBack) {
  CheckpointStore store(dir_, 3);
  ASSERT_TRUE(store.Save(Sample(10)).ok());
  ASSERT_TRUE(store.Save(Sample(20)).ok());
  std::ofstream(dir_ + "/" + CheckpointManifestName(20), std::ios::trunc) << "{\"form";
  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> loaded = store.LoadLatest(&warnings);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->meta.step, 10);
  EXPECT_EQ(warnings.size(), 1u);
}

// The whole resume path in one process: 12 steps straight, against 6 steps, a checkpoint, and a
// fresh model (different initialisation) resumed to 12. Data order crosses an epoch boundary.
TEST_F(CheckpointTest, ResumedTrainingContinuesTheLossCurveExactly) {
  auto run = [](uint64_t init_seed, int64_t steps, CheckpointStore* store, const Checkpoint* resume,
                ModelPtr* model_out) {
    return TrainMlp(init_seed, steps, store, resume, nullptr, model_out).losses;
  };
  ModelPtr straight_model;
  const std::vector<double> straight = run(1, 12, nullptr, nullptr, &straight_model);
  ASSERT_EQ(straight.size(), 12u);

  CheckpointStore store(dir_, 3);
  ModelPtr first_model;
  run(1, 6, &store, nullptr, &first_model);
  EXPECT_EQ(store.ListSteps(), (std::vector<int64_t>{4, 6}));  // every 4, and the last step
  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> latest = store.LoadLatest(&warnings);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->meta.step, 6);
  EXPECT_EQ((*latest)->meta.epoch, 1);
  EXPECT_EQ((*latest)->meta.step_in_epoch, 1);
  ModelPtr resumed_model;
  const std::vector<double> resumed = run(99, 12, nullptr, &**latest, &resumed_model);
  ASSERT_EQ(resumed.size(), 6u);  // steps 7..12
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(resumed[i], straight[6 + i]) << "step " << 7 + i;
  auto a = straight_model->parameters();
  auto b = resumed_model->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
}

// A stop requested during step 5 (of 12): rank 0 saves a checkpoint of step 5 off its interval,
// the run returns stopped there, and a fresh model resumed from it ends exactly where 12 steps
// straight do.
TEST_F(CheckpointTest, AStopSavesTheCurrentStepAndTheRunResumesFromIt) {
  ModelPtr straight_model;
  const TrainResult straight = TrainMlp(1, 12, nullptr, nullptr, nullptr, &straight_model);
  ASSERT_EQ(straight.losses.size(), 12u);
  EXPECT_FALSE(straight.stopped);

  CheckpointStore store(dir_, 3);
  int polls = 0;
  ModelPtr stopped_model;
  std::string text;
  const TrainResult stopped = TrainMlp(
      1, 12, &store, nullptr, [&polls] { return ++polls >= 5; }, &stopped_model, &text);
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(stopped.steps, 5);
  ASSERT_EQ(stopped.losses.size(), 5u);
  EXPECT_EQ(store.ListSteps(), (std::vector<int64_t>{4, 5}));  // the interval's, then the stop's
  EXPECT_NE(text.find("Stopping at step 5 on request (SIGTERM); checkpoint of step 5 saved in"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("total images/sec"), std::string::npos) << "a stopped run did not finish";

  std::vector<std::string> warnings;
  Result<std::optional<Checkpoint>> latest = store.LoadLatest(&warnings);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->meta.step, 5);
  EXPECT_EQ((*latest)->meta.epoch, 1);
  EXPECT_EQ((*latest)->meta.step_in_epoch, 0);
  ModelPtr resumed_model;
  const TrainResult resumed = TrainMlp(99, 12, nullptr, &**latest, nullptr, &resumed_model);
  ASSERT_EQ(resumed.losses.size(), 7u);  // steps 6..12
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(resumed.losses[i], straight.losses[5 + i]) << 6 + i;
  auto a = straight_model->parameters();
  auto b = resumed_model->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
}

TEST_F(CheckpointTest, CheckpointOfAnotherModelIsRefusedByName) {
  torch::manual_seed(1);
  ModelPtr mlp = BuiltinModels().Find("mnist_mlp").value()->create();
  ModelPtr cnn = BuiltinModels().Find("mnist_cnn").value()->create();
  torch::optim::SGD sgd(mlp->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  EnsureMomentumBuffers(sgd);
  const Checkpoint c = CaptureCheckpoint(*mlp, sgd, {});
  EXPECT_TRUE(CheckMatchesModel(c, *mlp, true).ok());
  EXPECT_FALSE(CheckMatchesModel(c, *mlp, false).ok());  // momentum buffers it does not expect
  Status other = CheckMatchesModel(c, *cnn, true);
  EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.message().find("the checkpoint holds \"param/"), std::string::npos)
      << other.message();
}

}  // namespace
}  // namespace dljob::trainer
