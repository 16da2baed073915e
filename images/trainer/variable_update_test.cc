#include "images/trainer/variable_update.h"

#include <array>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/gradient_compression.h"
#include "images/trainer/comm/identical_ranks_collective.h"
#include "images/trainer/comm/thread_ranks_collective.h"
#include "images/trainer/models/builtin.h"

namespace dljob::trainer {
namespace {

// mnist_mlp: 4 parameter tensors, 25,450 floats.
ModelPtr MakeModel() {
  torch::manual_seed(5);
  return BuiltinModels().Find("mnist_mlp").value()->create();
}

struct OneStep {
  std::vector<torch::Tensor> params;
  IdenticalRanksCollective collective{2};  // every rank holds this rank's values
};

// One SGD step of `model` through an updater made from `options`, on two identical ranks.
void Step(const VariableUpdateOptions& options, OneStep& out) {
  ModelPtr model = MakeModel();
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  Result<VariableUpdaterPtr> updater = MakeVariableUpdater(options, *model, out.collective);
  ASSERT_TRUE(updater.ok()) << updater.status().message();
  torch::manual_seed(6);
  torch::Tensor images = torch::randn({8, 1, 28, 28});
  torch::Tensor labels = torch::randint(0, 10, {8}, torch::kInt64);
  sgd.zero_grad();
  torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(images), labels);
  ASSERT_TRUE((*updater)->BeforeBackward(1).ok());
  (loss * (*updater)->loss_scale()).backward();  // as the Trainer does
  ASSERT_TRUE((*updater)->Apply(1, sgd).ok());
  for (const torch::Tensor& p : model->parameters()) out.params.push_back(p.detach().clone());
}

// The same step on one rank with no communication: what every path must produce.
std::vector<torch::Tensor> Reference() {
  ModelPtr model = MakeModel();
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  torch::manual_seed(6);
  torch::Tensor images = torch::randn({8, 1, 28, 28});
  torch::Tensor labels = torch::randint(0, 10, {8}, torch::kInt64);
  sgd.zero_grad();
  torch::nn::functional::cross_entropy(model->forward(images), labels).backward();
  sgd.step();
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : model->parameters()) params.push_back(p.detach().clone());
  return params;
}

void ExpectParams(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(torch::equal(got[i], want[i])) << "parameter " << i;
  }
}

TEST(VariableUpdateTest, AllreduceFusedSendsOneBucketAndSteps) {
  const std::vector<torch::Tensor> want = Reference();
  for (bool overlap : {false, true}) {
    VariableUpdateOptions options;
    options.overlap_backward = overlap;
    OneStep step;
    Step(options, step);
    ExpectParams(step.params, want);
    EXPECT_EQ(step.collective.allreduce_calls(), 1) << overlap;  // one 64 MB bucket
    EXPECT_EQ(step.collective.reduce_calls() + step.collective.broadcast_calls(), 0);
  }
}

TEST(VariableUpdateTest, AllreducePerTensorWithFusionOff) {
  VariableUpdateOptions options;
  options.fusion.threshold_bytes = 0;
  options.overlap_backward = false;
  OneStep step;
  Step(options, step);
  ExpectParams(step.params, Reference());
  EXPECT_EQ(step.collective.allreduce_calls(), 4);
}

TEST(VariableUpdateTest, ParameterServerReducesAndBroadcastsInTheSameChunks) {
  const std::vector<torch::Tensor> want = Reference();
  struct Case {
    size_t threshold_bytes, segment_bytes;
    int64_t chunks;
  };
  // Per tensor; 40,000-byte segments of 101,800 bytes; one segment of everything.
  for (const Case& c : {Case{0, 0, 4}, Case{1 << 20, 40000, 3}, Case{1 << 20, 0, 1}}) {
    VariableUpdateOptions options;
    options.kind = VariableUpdate::kParameterServer;
    options.fusion.threshold_bytes = c.threshold_bytes;
    options.fusion.segment_bytes = c.segment_bytes;
    OneStep step;
    Step(options, step);
    ExpectParams(step.params, want);
    EXPECT_EQ(step.collective.reduce_calls(), c.chunks) << c.threshold_bytes << c.segment_bytes;
    EXPECT_EQ(step.collective.broadcast_calls(), c.chunks);
    EXPECT_EQ(step.collective.allreduce_calls(), 0);
  }
}

// Elementwise 2-bit quantisation with a zero residual, as a tensor: +T, -T or 0.
torch::Tensor Quantised(const torch::Tensor& g, float threshold) {
  torch::Tensor q = torch::zeros_like(g);
  q.masked_fill_(g >= threshold, threshold);
  q.masked_fill_(g <= -threshold, -threshold);
  return q;
}

VariableUpdateOptions TwoBit(float threshold) {
  VariableUpdateOptions options;
  options.compression = GradientCompression::kTwoBit;
  options.compression_threshold = threshold;
  options.overlap_backward = false;
  return options;
}

// On two identical ranks every rank sends the same codes, so the mean is this rank's quantised
// gradient: one SGD step moves each parameter by -lr * (+T, -T or 0), through one allgather.
TEST(VariableUpdateTest, TwoBitStepsByTheQuantisedGradient) {
  constexpr float kT = 0.01f;
  // This rank's unscaled gradients, as a 1-rank run computes them.
  ModelPtr reference = MakeModel();
  std::vector<torch::Tensor> start;
  for (const torch::Tensor& p : reference->parameters()) start.push_back(p.detach().clone());
  torch::manual_seed(6);
  torch::Tensor images = torch::randn({8, 1, 28, 28});
  torch::Tensor labels = torch::randint(0, 10, {8}, torch::kInt64);
  torch::nn::functional::cross_entropy(reference->forward(images), labels).backward();
  std::vector<torch::Tensor> want;
  int64_t nonzero = 0;
  for (size_t i = 0; i < start.size(); ++i) {
    torch::Tensor q = Quantised(reference->parameters()[i].grad(), kT);
    nonzero += q.ne(0).sum().item<int64_t>();
    want.push_back(start[i].add(q, -0.1));
  }
  ASSERT_GT(nonzero, 100) << "the threshold should let some values through";

  OneStep step;
  Step(TwoBit(kT), step);
  ExpectParams(step.params, want);
  EXPECT_EQ(step.collective.allgather_bytes_calls(), 1);
  EXPECT_EQ(step.collective.allreduce_calls() + step.collective.reduce_calls(), 0);
}

TEST(VariableUpdateTest, TwoBitTrafficIsTheMeasuredPackedWords) {
  ModelPtr model = MakeModel();
  IdenticalRanksCollective collective(2);
  Result<VariableUpdaterPtr> updater = MakeVariableUpdater(TwoBit(0.5f), *model, collective);
  ASSERT_TRUE(updater.ok()) << updater.status().message();
  const GradientTraffic t = (*updater)->traffic();
  EXPECT_EQ(t.encoding, "2bit");
  EXPECT_EQ(t.bytes_per_step, 6364);  // ceil(25,450 / 16) words of 4 bytes
  EXPECT_EQ(t.fp32_bytes_per_step, 101800);
  EXPECT_EQ((*updater)->loss_scale(), 1.0) << "each rank quantises its own mean gradient";
  VariableUpdateOptions fp16;
  fp16.fusion.fp16 = true;
  Result<VariableUpdaterPtr> plain = MakeVariableUpdater(fp16, *model, collective);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->traffic().bytes_per_step, 50900);
  EXPECT_EQ(FormatGradientTraffic(t), "gradient bytes/step: 6,364 (2bit) vs 101,800 (fp32)");
  EXPECT_EQ(FormatGradientTraffic({"fp32", 900136, 900136}), "gradient bytes/step: 900,136 (fp32)");
  EXPECT_EQ(FormatGradientTraffic({"fp16", 450, 900}),
            "gradient bytes/step: 450 (fp16) vs 900 (fp32)");
}

// Error feedback through the updater: a constant gradient of 0.25 under T = 1 moves nothing for
// three steps, then the accumulated residual sends one full -lr * T, and so on.
TEST(VariableUpdateTest, TwoBitResidualCarriesAcrossSteps) {
  ModelPtr model = MakeModel();
  IdenticalRanksCollective collective(2);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(1.0));
  Result<VariableUpdaterPtr> updater = MakeVariableUpdater(TwoBit(1.0f), *model, collective);
  ASSERT_TRUE(updater.ok()) << updater.status().message();
  std::vector<torch::Tensor> want;  // where each parameter should be
  for (const torch::Tensor& p : model->parameters()) want.push_back(p.detach().clone());
  for (int64_t step = 1; step <= 8; ++step) {
    for (torch::Tensor p : model->parameters()) p.mutable_grad() = torch::full_like(p, 0.25);
    ASSERT_TRUE((*updater)->BeforeBackward(step).ok());
    ASSERT_TRUE((*updater)->Apply(step, sgd).ok());
    for (size_t i = 0; i < want.size(); ++i) {
      if (step % 4 == 0) want[i] -= 1.0;  // the residual reached T: one -lr * T
      ASSERT_TRUE(torch::equal(model->parameters()[i], want[i]))
          << "step " << step << " parameter " << i;
    }
  }
}

// Three ranks, each with its own data: every rank ends each step with the same parameters, and
// the first step's update is the mean of the three ranks' own quantised gradients.
TEST(VariableUpdateTest, TwoBitOnThreeRanksAppliesTheMeanOfEachRanksCodes) {
  constexpr int kRanks = 3;
  constexpr float kT = 0.01f;
  ThreadRanks group(kRanks);
  std::array<std::vector<torch::Tensor>, kRanks> start, grads, after1, after2;
  std::array<Status, kRanks> failed;
  // torch's random generator is one per process: the models and batches are made here, in rank
  // order, not in the rank threads, where the draws would interleave differently on each run.
  std::array<ModelPtr, kRanks> models;
  std::array<std::array<torch::Tensor, 2>, kRanks> images, labels;
  for (int r = 0; r < kRanks; ++r) {
    models[r] = MakeModel();  // the same initialisation on every rank
    torch::manual_seed(20 + static_cast<uint64_t>(r));
    for (int i = 0; i < 2; ++i) {
      images[r][i] = torch::randn({8, 1, 28, 28});
      labels[r][i] = torch::randint(0, 10, {8}, torch::kInt64);
    }
  }
  group.Run([&](int r, Collective& c) {
    Model* model = models[r].get();
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
    Result<VariableUpdaterPtr> updater = MakeVariableUpdater(TwoBit(kT), *model, c);
    if (!updater.ok()) {
      failed[r] = updater.status();
      return;
    }
    for (const torch::Tensor& p : model->parameters()) start[r].push_back(p.detach().clone());
    for (int64_t step = 1; step <= 2; ++step) {
      const torch::Tensor& batch = images[r][step - 1];
      sgd.zero_grad();
      torch::Tensor loss =
          torch::nn::functional::cross_entropy(model->forward(batch), labels[r][step - 1]);
      (loss * (*updater)->loss_scale()).backward();
      if (step == 1) {
        for (const torch::Tensor& p : model->parameters()) grads[r].push_back(p.grad().clone());
      }
      if (Status s = (*updater)->Apply(step, sgd); !s.ok()) {
        failed[r] = s;
        return;
      }
      auto& out = step == 1 ? after1[r] : after2[r];
      for (const torch::Tensor& p : model->parameters()) out.push_back(p.detach().clone());
    }
  });
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(failed[r].ok()) << failed[r].message();
  int64_t moved = 0;
  for (size_t i = 0; i < start[0].size(); ++i) {
    torch::Tensor sum = torch::zeros_like(start[0][i]);
    for (int r = 0; r < kRanks; ++r) sum += Quantised(grads[r][i], kT);  // rank order
    torch::Tensor want = start[0][i].add(sum.mul(1.0f / kRanks), -0.1);
    EXPECT_TRUE(torch::allclose(after1[0][i], want, 0, 1e-7)) << "parameter " << i;
    moved += after1[0][i].ne(start[0][i]).sum().item<int64_t>();
    for (int r = 1; r < kRanks; ++r) {
      EXPECT_TRUE(torch::equal(after1[r][i], after1[0][i])) << "rank " << r << " step 1";
      EXPECT_TRUE(torch::equal(after2[r][i], after2[0][i])) << "rank " << r << " step 2";
    }
  }
  EXPECT_GT(moved, 100) << "the threshold should let some values through";
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(group.allgather_bytes_calls(r), 2);
    EXPECT_EQ(group.allgather_bytes_sent(r), 2 * 6364);
  }
}

TEST(VariableUpdateTest, TwoBitRefusesTheParameterServerAndABadThreshold) {
  ModelPtr model = MakeModel();
  IdenticalRanksCollective collective(2);
  VariableUpdateOptions ps = TwoBit(0.5f);
  ps.kind = VariableUpdate::kParameterServer;
  EXPECT_EQ(MakeVariableUpdater(ps, *model, collective).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeVariableUpdater(TwoBit(0.0f), *model, collective).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeVariableUpdater(TwoBit(std::nanf("")), *model, collective).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dljob::trainer
