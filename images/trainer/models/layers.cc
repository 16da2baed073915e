#include "images/trainer/models/layers.h"

#include <utility>

namespace dljob::trainer {

BasicConv2dImpl::BasicConv2dImpl(const BasicConvOptions& o)
    : conv_(
          register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(o.in, o.out, o.kernel)
                                                        .stride(o.stride)
                                                        .padding(o.padding)
                                                        .bias(false)))),
      bn_(register_module(
          "bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(o.out).eps(o.bn_eps)))) {}

torch::Tensor BasicConv2dImpl::forward(torch::Tensor x) {
  return bn_->forward(conv_->forward(x)).relu_();
}

ConcatImpl::ConcatImpl(std::vector<torch::nn::Sequential> branches)
    : branches_(std::move(branches)) {
  for (size_t i = 0; i < branches_.size(); ++i) {
    register_module("branch" + std::to_string(i), branches_[i]);
  }
}

torch::Tensor ConcatImpl::forward(torch::Tensor x) {
  std::vector<torch::Tensor> outputs;
  outputs.reserve(branches_.size());
  for (torch::nn::Sequential& branch : branches_) outputs.push_back(branch->forward(x));
  return torch::cat(outputs, 1);
}

SequentialModel::SequentialModel(torch::nn::Sequential body)
    : body_(register_module("body", std::move(body))) {}

torch::Tensor SequentialModel::forward(torch::Tensor x) { return body_->forward(x); }

namespace {

// torchvision draws from a normal truncated at +-2; with std <= 0.1 that is >= 20 standard
// deviations, so the truncation never bites and a plain normal draws the same distribution.
void InitNormal(torch::Tensor& weight, double std) { torch::nn::init::normal_(weight, 0.0, std); }

}  // namespace

void InitWeights(torch::nn::Module& root, InitStyle style) {
  torch::NoGradGuard no_grad;
  const double normal_std = style == InitStyle::kNormal001 ? 0.01 : 0.1;
  const bool kaiming = style == InitStyle::kKaimingFanOut || style == InitStyle::kVggLinear;
  for (const std::shared_ptr<torch::nn::Module>& m : root.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<torch::nn::Conv2d>()) {
      if (kaiming) {
        torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else {
        InitNormal(conv->weight, normal_std);
      }
      if (conv->bias.defined()) torch::nn::init::zeros_(conv->bias);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    } else if (auto* linear = m->as<torch::nn::Linear>()) {
      if (style == InitStyle::kKaimingFanOut) continue;  // LibTorch's default = PyTorch's
      if (style == InitStyle::kVggLinear) {
        InitNormal(linear->weight, 0.01);
        torch::nn::init::zeros_(linear->bias);
      } else {
        InitNormal(linear->weight, normal_std);  // torchvision leaves the bias at its default
      }
    }
  }
}

int64_t ParameterCount(torch::nn::Module& module) {
  int64_t count = 0;
  for (const torch::Tensor& p : module.parameters()) {
    if (p.requires_grad()) count += p.numel();
  }
  return count;
}

int64_t ParameterTensorCount(torch::nn::Module& module) {
  int64_t count = 0;
  for (const torch::Tensor& p : module.parameters()) count += p.requires_grad() ? 1 : 0;
  return count;
}

}  // namespace dljob::trainer
