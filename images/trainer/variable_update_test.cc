#include "images/trainer/variable_update.h"

#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/comm/identical_ranks_collective.h"
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

}  // namespace
}  // namespace dljob::trainer
