// Numerical gradient check (Caffe-style): for each built-in model, in float64, compare autograd's
// gradient of the mean cross-entropy with central differences on sampled parameter entries.
#include <cmath>
#include <random>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/models/builtin.h"

namespace dljob::trainer {
namespace {

constexpr double kStep = 1e-6;
constexpr int kEntriesPerTensor = 6;

double Loss(Model& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  return torch::nn::functional::cross_entropy(model.forward(x), y).item<double>();
}

void CheckGradients(const std::string& name) {
  ModelRegistry registry = BuiltinModels();
  const ModelInfo& info = *registry.Find(name).value();
  torch::manual_seed(3);
  ModelPtr model = info.create();
  model->to(torch::kFloat64);
  std::vector<int64_t> shape = {3};
  shape.insert(shape.end(), info.input_shape.begin(), info.input_shape.end());
  torch::Tensor x = torch::randn(shape, torch::kFloat64);
  torch::Tensor y = torch::randint(0, info.num_classes, {3}, torch::kInt64);

  torch::nn::functional::cross_entropy(model->forward(x), y).backward();
  std::mt19937 pick(11);
  for (const auto& item : model->named_parameters()) {
    torch::Tensor p = item.value();
    torch::Tensor flat = p.detach().view({-1});
    torch::Tensor grad = p.grad().view({-1});
    for (int k = 0; k < kEntriesPerTensor; ++k) {
      const int64_t i = std::uniform_int_distribution<int64_t>(0, flat.numel() - 1)(pick);
      const double original = flat[i].item<double>();
      flat[i] = original + kStep;
      const double plus = Loss(*model, x, y);
      flat[i] = original - kStep;
      const double minus = Loss(*model, x, y);
      flat[i] = original;
      const double numeric = (plus - minus) / (2 * kStep);
      const double analytic = grad[i].item<double>();
      EXPECT_NEAR(analytic, numeric, 1e-6 + 1e-4 * std::fabs(numeric))
          << name << " " << item.key() << "[" << i << "]";
    }
  }
}

TEST(GradientCheckTest, MnistMlp) { CheckGradients("mnist_mlp"); }
TEST(GradientCheckTest, MnistCnn) { CheckGradients("mnist_cnn"); }

}  // namespace
}  // namespace dljob::trainer
