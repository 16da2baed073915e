// AlexNet as torchvision builds it (the one-GPU variant of Krizhevsky's "One weird trick"
// paper: 64-192-384-256-256 convolutions, no local response normalisation), 3x224x224 in.
// torchvision keeps LibTorch's default initialisation for it, and so do we.
#include <cassert>

#include <torch/torch.h>

#include "images/trainer/models/builtin.h"
#include "images/trainer/models/layers.h"

namespace dljob::trainer {
namespace {

torch::nn::Conv2d AlexConv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(pad));
}

torch::nn::ReLU Relu() { return torch::nn::ReLU(torch::nn::ReLUOptions(true)); }
torch::nn::MaxPool2d Pool() {
  return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2));
}

std::shared_ptr<Model> MakeAlexNet(int64_t num_classes) {
  torch::nn::Sequential body(AlexConv(3, 64, 11, 4, 2), Relu(), Pool(),              //
                             AlexConv(64, 192, 5, 1, 2), Relu(), Pool(),             //
                             AlexConv(192, 384, 3, 1, 1), Relu(),                    //
                             AlexConv(384, 256, 3, 1, 1), Relu(),                    //
                             AlexConv(256, 256, 3, 1, 1), Relu(), Pool(),            //
                             torch::nn::AdaptiveAvgPool2d(6), torch::nn::Flatten(),  //
                             torch::nn::Dropout(0.5), torch::nn::Linear(256 * 6 * 6, 4096), Relu(),
                             torch::nn::Dropout(0.5), torch::nn::Linear(4096, 4096), Relu(),
                             torch::nn::Linear(4096, num_classes));
  return std::make_shared<SequentialModel>(body);
}

}  // namespace

void RegisterAlexNet(ModelRegistry& registry) {
  Status s = registry.Register(
      {"alexnet", "AlexNet (torchvision), 3x224x224, 61.1M parameters", {3, 224, 224}, 1000, [] {
         return MakeAlexNet(1000);
       }});
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
