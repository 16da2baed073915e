// VGG16 (configuration "D" of Simonyan & Zisserman, no batch norm) as torchvision builds it:
// 13 3x3 convolutions, adaptive average pool to 7x7, three fully connected layers with dropout.
#include <cassert>
#include <vector>

#include <torch/torch.h>

#include "images/trainer/models/builtin.h"
#include "images/trainer/models/layers.h"

namespace dljob::trainer {
namespace {

constexpr int64_t kMaxPool = 0;  // a 2x2 max pool in the layer list

std::shared_ptr<Model> MakeVgg(const std::vector<int64_t>& layers, int64_t num_classes) {
  torch::nn::Sequential body;
  int64_t in = 3;
  for (int64_t width : layers) {
    if (width == kMaxPool) {
      body->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
      continue;
    }
    body->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, width, 3).padding(1)));
    body->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
    in = width;
  }
  body->push_back(torch::nn::AdaptiveAvgPool2d(7));
  body->push_back(torch::nn::Flatten());
  body->push_back(torch::nn::Linear(in * 7 * 7, 4096));
  body->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  body->push_back(torch::nn::Dropout(0.5));
  body->push_back(torch::nn::Linear(4096, 4096));
  body->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  body->push_back(torch::nn::Dropout(0.5));
  body->push_back(torch::nn::Linear(4096, num_classes));
  auto model = std::make_shared<SequentialModel>(body);
  InitWeights(*model, InitStyle::kVggLinear);
  return model;
}

}  // namespace

void RegisterVgg(ModelRegistry& registry) {
  const std::vector<int64_t> vgg16 = {64,  64,       kMaxPool, 128,      128, kMaxPool,
                                      256, 256,      256,      kMaxPool, 512, 512,
                                      512, kMaxPool, 512,      512,      512, kMaxPool};
  Status s = registry.Register({"vgg16",
                                "VGG16 (no batch norm), 3x224x224, 138.4M parameters",
                                {3, 224, 224},
                                1000,
                                [vgg16] { return MakeVgg(vgg16, 1000); }});
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
