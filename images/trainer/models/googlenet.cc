// GoogLeNet (Inception v1, Szegedy et al. 2014) as torchvision builds it, WITHOUT the two
// auxiliary classifiers (aux_logits=False, transform_input=False): batch-normalised
// BasicConv2d everywhere, and — like torchvision, whose pretrained weights depend on it — a 3x3
// convolution in the branch the paper gives a 5x5. 3x224x224 in, 1000 classes, 6,624,904
// parameters (torchvision's published count for googlenet) in 173 tensors.
#include <cassert>

#include <torch/torch.h>

#include "images/trainer/models/builtin.h"
#include "images/trainer/models/layers.h"

namespace dljob::trainer {
namespace {

BasicConv2d BasicConv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                      int64_t pad = 0) {
  return BasicConv2d(BasicConvOptions{in, out, kernel, stride, pad});
}

torch::nn::MaxPool2d CeilPool(int64_t kernel, int64_t stride, int64_t pad = 0) {
  return torch::nn::MaxPool2d(
      torch::nn::MaxPool2dOptions(kernel).stride(stride).padding(pad).ceil_mode(true));
}

// An Inception block: 1x1 | 1x1 -> 3x3 | 1x1 -> 3x3 ("5x5") | 3x3 max pool -> 1x1.
Concat Inception(int64_t in, int64_t ch1x1, int64_t ch3x3red, int64_t ch3x3, int64_t ch5x5red,
                 int64_t ch5x5, int64_t pool_proj) {
  return Concat(std::vector<torch::nn::Sequential>{
      torch::nn::Sequential(BasicConv(in, ch1x1, 1)),
      torch::nn::Sequential(BasicConv(in, ch3x3red, 1), BasicConv(ch3x3red, ch3x3, 3, 1, 1)),
      torch::nn::Sequential(BasicConv(in, ch5x5red, 1), BasicConv(ch5x5red, ch5x5, 3, 1, 1)),
      torch::nn::Sequential(CeilPool(3, 1, 1), BasicConv(in, pool_proj, 1)),
  });
}

std::shared_ptr<Model> MakeGoogLeNet(int64_t num_classes) {
  torch::nn::Sequential body(
      BasicConv(3, 64, 7, 2, 3), CeilPool(3, 2), BasicConv(64, 64, 1), BasicConv(64, 192, 3, 1, 1),
      CeilPool(3, 2),  //
      Inception(192, 64, 96, 128, 16, 32, 32), Inception(256, 128, 128, 192, 32, 96, 64),
      CeilPool(3, 2),  //
      Inception(480, 192, 96, 208, 16, 48, 64), Inception(512, 160, 112, 224, 24, 64, 64),
      Inception(512, 128, 128, 256, 24, 64, 64), Inception(512, 112, 144, 288, 32, 64, 64),
      Inception(528, 256, 160, 320, 32, 128, 128),  //
      CeilPool(2, 2),                               //
      Inception(832, 256, 160, 320, 32, 128, 128), Inception(832, 384, 192, 384, 48, 128, 128),
      torch::nn::AdaptiveAvgPool2d(1), torch::nn::Flatten(), torch::nn::Dropout(0.2),
      torch::nn::Linear(1024, num_classes));
  auto model = std::make_shared<SequentialModel>(body);
  InitWeights(*model, InitStyle::kNormal001);
  return model;
}

}  // namespace

void RegisterGoogLeNet(ModelRegistry& registry) {
  Status s = registry.Register(
      {"googlenet",
       "GoogLeNet / Inception v1 (torchvision, no aux heads), 3x224x224, 6.6M parameters",
       {3, 224, 224},
       1000,
       [] { return MakeGoogLeNet(1000); }});
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
