#include "images/trainer/trainer.h"

#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/loopback_collective.h"
#include "images/trainer/models/builtin.h"
#include "jobs/metric_line.h"

namespace dljob::trainer {
namespace {

ModelPtr MakeModel(const std::string& name, uint64_t seed) {
  torch::manual_seed(seed);
  return BuiltinModels().Find(name).value()->create();
}

TrainerOptions Options(int64_t steps) {
  TrainerOptions o;
  o.batch_size = 16;
  o.total_steps = steps;
  o.num_warmup_batches = 2;
  o.learning_rate = 0.05;
  o.display_every = 5;
  return o;
}

std::vector<MetricSample> MetricLines(const std::string& text) {
  std::vector<MetricSample> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (auto s = ParseMetricLine(line)) samples.push_back(*s);
  }
  return samples;
}

// A labelled set the MLP can learn: class = which half of the image is brighter.
Dataset TwoClassDataset(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  Dataset d;
  d.labels = torch::randint(0, 2, {n}, torch::kInt64);
  d.images = torch::randn({n, 1, 28, 28}) * 0.5;
  torch::Tensor sign = d.labels.to(torch::kFloat32).mul(2).sub(1).view({n, 1, 1, 1});
  d.images.slice(2, 0, 14).add_(sign);
  d.images.slice(2, 14, 28).sub_(sign);
  d.num_classes = 10;
  return d;
}

TEST(TrainerTest, LearnsTheSyntheticBatchAndPrintsTfCnnStyle) {
  ModelPtr model = MakeModel("mnist_mlp", 1);
  IdenticalRanksCollective collective(2);  // one rank sends nothing
  SyntheticDataSource data({1, 28, 28}, 10, 1, 16, 5);
  std::ostringstream out;
  Reporter reporter(out, 0);
  Trainer trainer(Options(30), *model, collective, data, nullptr, reporter);
  Result<TrainResult> result = trainer.Run();
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->losses.size(), 30u);
  EXPECT_LT(result->final_loss, 0.5 * result->losses.front());
  EXPECT_GT(result->total_images_per_sec, 0.0);
  const std::string text = out.str();
  for (const char* needle : {"Running warm up\nDone warm up\nStep\tImg/sec\ttotal_loss\n",
                             "\n5\timages/sec: ", "\n30\timages/sec: ", "total images/sec: "}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  }
  std::vector<MetricSample> metrics = MetricLines(text);
  // Every 5 steps (step 30's folded into the epoch-end line), the epoch end, the final line.
  ASSERT_EQ(metrics.size(), 5u + 1 + 1);
  EXPECT_EQ(metrics.front().step, 5);
  EXPECT_EQ(metrics.back().step, 30);
  EXPECT_EQ(metrics.back().total_steps, 30);
  EXPECT_TRUE(metrics.back().images_per_sec.has_value());
  // Parameters and gradients went through the collective.
  const int64_t tensors = static_cast<int64_t>(model->parameters().size());
  // Parameters and momentum buffers (the MLP has no other buffers), and the start step.
  EXPECT_EQ(collective.broadcast_calls(), 2 * tensors + 1);
  // Gradients fused into one bucket (the model is far below 64 MB), then the loss.
  EXPECT_EQ(collective.allreduce_calls(), 30 * 2);
}

TEST(TrainerTest, FusionOffSendsOneAllreducePerGradient) {
  ModelPtr model = MakeModel("mnist_mlp", 3);
  IdenticalRanksCollective collective(2);  // one rank sends nothing
  SyntheticDataSource data({1, 28, 28}, 10, 1, 16, 5);
  std::ostringstream out;
  Reporter reporter(out, 0);
  TrainerOptions options = Options(4);
  options.fusion.threshold_bytes = 0;
  Trainer trainer(options, *model, collective, data, nullptr, reporter);
  ASSERT_TRUE(trainer.Run().ok());
  const int64_t tensors = static_cast<int64_t>(model->parameters().size());
  EXPECT_EQ(collective.allreduce_calls(), 4 * (tensors + 1));  // grads + the loss
}

TEST(TrainerTest, SameSeedSameLosses) {
  std::vector<double> runs[2];
  for (auto& losses : runs) {
    ModelPtr model = MakeModel("mnist_mlp", 9);
    LoopbackCollective collective;
    ShardedDataSource data(TwoClassDataset(128, 4), 1, 0, 16, 77);
    std::ostringstream out;
    Reporter reporter(out, 0);
    Result<TrainResult> r = Trainer(Options(12), *model, collective, data, nullptr, reporter).Run();
    ASSERT_TRUE(r.ok());
    losses = r->losses;
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST(TrainerTest, EvaluatesAtTheEndOfEachEpoch) {
  ModelPtr model = MakeModel("mnist_mlp", 2);
  LoopbackCollective collective;
  ShardedDataSource data(TwoClassDataset(256, 1), 1, 0, 16, 3);  // 16 steps per epoch
  Dataset test = TwoClassDataset(100, 2);
  std::ostringstream out;
  Reporter reporter(out, 0);
  TrainerOptions options = Options(2 * data.steps_per_epoch());
  options.display_every = 100;
  AccuracyEvaluator evaluator(test, 30);  // exercises a partial last eval batch
  Result<TrainResult> r = Trainer(options, *model, collective, data, &evaluator, reporter).Run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->final_accuracy.has_value());
  EXPECT_GT(*r->final_accuracy, 0.9);
  EXPECT_NE(out.str().find("Epoch 1: test accuracy = "), std::string::npos);
  EXPECT_NE(out.str().find("Epoch 2: test accuracy = "), std::string::npos);
  EXPECT_NE(out.str().find(" of 100)"), std::string::npos);
  int with_accuracy = 0;
  for (const MetricSample& m : MetricLines(out.str())) with_accuracy += m.accuracy.has_value();
  EXPECT_EQ(with_accuracy, 3);  // two epoch ends and the final line
}

class NanSource : public DataSource {
 public:
  int64_t steps_per_epoch() const override { return 10; }
  Batch Get(int64_t, int64_t) override {
    return {torch::full({4, 1, 28, 28}, std::nan("")), torch::zeros({4}, torch::kInt64), {}};
  }
};

TEST(TrainerTest, NonFiniteLossIsAnErrorNotACrash) {
  ModelPtr model = MakeModel("mnist_mlp", 1);
  LoopbackCollective collective;
  NanSource data;
  std::ostringstream out;
  Reporter reporter(out, 0);
  Result<TrainResult> r = Trainer(Options(5), *model, collective, data, nullptr, reporter).Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("loss is not finite at step 1"), std::string::npos);
}

TEST(TrainerTest, EmptyEpochIsRejected) {
  ModelPtr model = MakeModel("mnist_mlp", 1);
  LoopbackCollective collective;
  ShardedDataSource data(TwoClassDataset(8, 1), 1, 0, 16, 3);
  std::ostringstream out;
  Reporter reporter(out, 0);
  Result<TrainResult> r = Trainer(Options(5), *model, collective, data, nullptr, reporter).Run();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

// Parameters and losses of 6 steps of mnist_mlp on two identical ranks (exact: sums of two equal
// values halved), with the given gradient path.
struct PathRun {
  std::vector<double> losses;
  std::vector<torch::Tensor> params;
};
PathRun RunPath(VariableUpdate update, bool overlap, Timeline* timeline = nullptr) {
  ModelPtr model = MakeModel("mnist_mlp", 11);
  IdenticalRanksCollective collective(2);
  ShardedDataSource data(TwoClassDataset(128, 4), 1, 0, 16, 77);
  std::ostringstream out;
  Reporter reporter(out, 0);
  TrainerOptions options = Options(6);
  options.fusion.threshold_bytes = 40000;  // mnist_mlp's 25,450 floats in several buckets
  options.fusion.segment_bytes = 16384;
  options.variable_update = update;
  options.overlap_backward = overlap;
  options.timeline = timeline;
  Result<TrainResult> r = Trainer(options, *model, collective, data, nullptr, reporter).Run();
  EXPECT_TRUE(r.ok()) << r.status().message();
  PathRun run;
  if (r.ok()) run.losses = r->losses;
  for (const torch::Tensor& p : model->parameters()) run.params.push_back(p.detach().clone());
  return run;
}

TEST(TrainerTest, OverlapAndParameterServerTrainExactlyLikeThePlainAllreduce) {
  const PathRun plain = RunPath(VariableUpdate::kAllreduce, false);
  ASSERT_EQ(plain.losses.size(), 6u);
  EXPECT_LT(plain.losses.back(), plain.losses.front());
  for (const PathRun& other : {RunPath(VariableUpdate::kAllreduce, true),
                               RunPath(VariableUpdate::kParameterServer, false)}) {
    EXPECT_EQ(other.losses, plain.losses);
    ASSERT_EQ(other.params.size(), plain.params.size());
    for (size_t i = 0; i < plain.params.size(); ++i) {
      EXPECT_TRUE(torch::equal(other.params[i], plain.params[i])) << "parameter " << i;
    }
  }
}

TEST(TrainerTest, TimelineShowsEveryPhaseOfEveryStep) {
  for (VariableUpdate update : {VariableUpdate::kAllreduce, VariableUpdate::kParameterServer}) {
    Timeline timeline;
    RunPath(update, true, &timeline);
    std::map<std::string, std::set<int64_t>> steps;
    for (const TraceEvent& e : timeline.Events()) steps[e.name].insert(e.step);
    std::vector<std::string> names = {"FORWARD", "BACKWARD", "OPTIMIZER", "FUSE", "UNFUSE"};
    if (update == VariableUpdate::kAllreduce) {
      names.insert(names.end(), {"NEGOTIATE", "ALLREDUCE"});
    } else {
      names.insert(names.end(), {"REDUCE", "BROADCAST"});
    }
    for (const std::string& name : names) {
      EXPECT_EQ(steps[name], (std::set<int64_t>{1, 2, 3, 4, 5, 6})) << name;
    }
  }
}

}  // namespace
}  // namespace dljob::trainer
