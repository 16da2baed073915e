// Building blocks shared by the ImageNet models: conv + batch norm + ReLU (torchvision's
// BasicConv2d), a module that runs branches side by side and concatenates them on channels
// (every Inception block), a Sequential-backed Model, and torchvision-style weight init.
//
// All are ordinary LibTorch modules (ModuleHolders via TORCH_MODULE), so they nest in
// torch::nn::Sequential and their parameters register in construction order — the order in which
// torchvision registers the same layers, so tensor counts and gradient order match it.
// Thread-compatible, like every LibTorch module.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "images/trainer/models/model.h"

namespace dljob::trainer {

// Conv (no bias) -> BatchNorm(eps) -> ReLU.
struct BasicConvOptions {
  int64_t in = 0;
  int64_t out = 0;
  torch::ExpandingArray<2> kernel = 1;
  torch::ExpandingArray<2> stride = 1;
  torch::ExpandingArray<2> padding = 0;
  double bn_eps = 1e-3;  // torchvision's GoogLeNet and InceptionV3 use 0.001
};

class BasicConv2dImpl : public torch::nn::Module {
 public:
  explicit BasicConv2dImpl(const BasicConvOptions& options);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv_;
  torch::nn::BatchNorm2d bn_;
};
TORCH_MODULE(BasicConv2d);

// Applies every branch to the same input and concatenates the results along channels (dim 1).
class ConcatImpl : public torch::nn::Module {
 public:
  explicit ConcatImpl(std::vector<torch::nn::Sequential> branches);
  torch::Tensor forward(torch::Tensor x);

 private:
  std::vector<torch::nn::Sequential> branches_;
};
TORCH_MODULE(Concat);

// A Model whose whole forward pass is one Sequential (features, pooling, classifier).
class SequentialModel : public Model {
 public:
  explicit SequentialModel(torch::nn::Sequential body);
  torch::Tensor forward(torch::Tensor x) override;

 private:
  torch::nn::Sequential body_;
};

// torchvision's initialisations, applied to every Conv2d / BatchNorm2d / Linear under `root`.
enum class InitStyle {
  kKaimingFanOut,  // ResNet, VGG: conv kaiming_normal(fan_out, relu), bias 0; Linear default
  kVggLinear,      // as kKaimingFanOut, and Linear normal(0, 0.01), bias 0 (VGG's classifier)
  kNormal001,      // GoogLeNet: conv and Linear weights truncated normal(0, 0.01)
  kNormal01,       // InceptionV3: conv and Linear weights truncated normal(0, 0.1)
};
void InitWeights(torch::nn::Module& root, InitStyle style);

// Total number of scalar parameters and of parameter tensors (trainable ones only).
int64_t ParameterCount(torch::nn::Module& module);
int64_t ParameterTensorCount(torch::nn::Module& module);

}  // namespace dljob::trainer
