// InceptionV3 (Szegedy et al. 2015, "Rethinking the Inception Architecture") as torchvision
// builds it, WITHOUT the auxiliary classifier (aux_logits=False, transform_input=False).
// tf_cnn_benchmarks calls it inception3. 3x299x299 in, 1000 classes: 23,834,568 parameters in
// 284 tensors — torchvision's published 27,161,264 minus its AuxLogits head (3,326,696: 1x1 conv
// 768->128 + BN, 5x5 conv 128->768 + BN, fc 768->1000).
#include <cassert>

#include <torch/torch.h>

#include "images/trainer/models/builtin.h"
#include "images/trainer/models/layers.h"

namespace dljob::trainer {
namespace {

using Branches = std::vector<torch::nn::Sequential>;
using torch::nn::Sequential;

BasicConv2d Conv(int64_t in, int64_t out, torch::ExpandingArray<2> kernel,
                 torch::ExpandingArray<2> stride = 1, torch::ExpandingArray<2> pad = 0) {
  return BasicConv2d(BasicConvOptions{in, out, kernel, stride, pad});
}
BasicConv2d Conv1x7(int64_t in, int64_t out) { return Conv(in, out, {1, 7}, 1, {0, 3}); }
BasicConv2d Conv7x1(int64_t in, int64_t out) { return Conv(in, out, {7, 1}, 1, {3, 0}); }
BasicConv2d Conv1x3(int64_t in, int64_t out) { return Conv(in, out, {1, 3}, 1, {0, 1}); }
BasicConv2d Conv3x1(int64_t in, int64_t out) { return Conv(in, out, {3, 1}, 1, {1, 0}); }

// torchvision's F.avg_pool2d(x, 3, stride=1, padding=1) before each pool projection.
torch::nn::AvgPool2d AvgPool() {
  return torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(3).stride(1).padding(1));
}
torch::nn::MaxPool2d MaxPool() {
  return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2));
}

Concat InceptionA(int64_t in, int64_t pool_features) {
  return Concat(Branches{
      Sequential(Conv(in, 64, 1)),
      Sequential(Conv(in, 48, 1), Conv(48, 64, 5, 1, 2)),
      Sequential(Conv(in, 64, 1), Conv(64, 96, 3, 1, 1), Conv(96, 96, 3, 1, 1)),
      Sequential(AvgPool(), Conv(in, pool_features, 1)),
  });
}

Concat InceptionB(int64_t in) {  // grid reduction 35 -> 17
  return Concat(Branches{
      Sequential(Conv(in, 384, 3, 2)),
      Sequential(Conv(in, 64, 1), Conv(64, 96, 3, 1, 1), Conv(96, 96, 3, 2)),
      Sequential(MaxPool()),
  });
}

Concat InceptionC(int64_t in, int64_t c7) {
  return Concat(Branches{
      Sequential(Conv(in, 192, 1)),
      Sequential(Conv(in, c7, 1), Conv1x7(c7, c7), Conv7x1(c7, 192)),
      Sequential(Conv(in, c7, 1), Conv7x1(c7, c7), Conv1x7(c7, c7), Conv7x1(c7, c7),
                 Conv1x7(c7, 192)),
      Sequential(AvgPool(), Conv(in, 192, 1)),
  });
}

Concat InceptionD(int64_t in) {  // grid reduction 17 -> 8
  return Concat(Branches{
      Sequential(Conv(in, 192, 1), Conv(192, 320, 3, 2)),
      Sequential(Conv(in, 192, 1), Conv1x7(192, 192), Conv7x1(192, 192), Conv(192, 192, 3, 2)),
      Sequential(MaxPool()),
  });
}

// A 1x3 and a 3x1 convolution side by side on the same input (InceptionE's expanded branches).
Concat SplitAsymmetric(int64_t channels) {
  return Concat(
      Branches{Sequential(Conv1x3(channels, channels)), Sequential(Conv3x1(channels, channels))});
}

Concat InceptionE(int64_t in) {
  return Concat(Branches{
      Sequential(Conv(in, 320, 1)),
      Sequential(Conv(in, 384, 1), SplitAsymmetric(384)),
      Sequential(Conv(in, 448, 1), Conv(448, 384, 3, 1, 1), SplitAsymmetric(384)),
      Sequential(AvgPool(), Conv(in, 192, 1)),
  });
}

std::shared_ptr<Model> MakeInception3(int64_t num_classes) {
  Sequential body(
      Conv(3, 32, 3, 2), Conv(32, 32, 3), Conv(32, 64, 3, 1, 1), MaxPool(),  // 147 -> 73
      Conv(64, 80, 1), Conv(80, 192, 3), MaxPool(),                          // 71 -> 35
      InceptionA(192, 32), InceptionA(256, 64), InceptionA(288, 64),         // 35x35x288
      InceptionB(288),                                                       // 17x17x768
      InceptionC(768, 128), InceptionC(768, 160), InceptionC(768, 160), InceptionC(768, 192),
      InceptionD(768),                     // 8x8x1280
      InceptionE(1280), InceptionE(2048),  // 8x8x2048
      torch::nn::AdaptiveAvgPool2d(1), torch::nn::Flatten(), torch::nn::Dropout(0.5),
      torch::nn::Linear(2048, num_classes));
  auto model = std::make_shared<SequentialModel>(body);
  InitWeights(*model, InitStyle::kNormal01);
  return model;
}

}  // namespace

void RegisterInception3(ModelRegistry& registry) {
  Status s =
      registry.Register({"inception3",
                         "InceptionV3 (torchvision, no aux head), 3x299x299, 23.8M parameters",
                         {3, 299, 299},
                         1000,
                         [] { return MakeInception3(1000); }});
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
