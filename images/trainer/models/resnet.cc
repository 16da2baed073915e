// ResNet-18/34/50/101/152 as torchvision builds them (He et al. 2015, "v1.5": in a bottleneck
// block the stride sits on the 3x3 convolution, not the first 1x1). 3x224x224 in, 1000 classes.
#include <array>
#include <cassert>
#include <string>

#include <torch/torch.h>

#include "images/trainer/models/builtin.h"
#include "images/trainer/models/layers.h"

namespace dljob::trainer {
namespace {

torch::nn::Conv2d ResnetConv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// The 1x1 projection on the shortcut when a block changes resolution or width.
torch::nn::Sequential Downsample(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Sequential(ResnetConv(in, out, 1, stride), torch::nn::BatchNorm2d(out));
}

class Block : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

// Two 3x3 convolutions (ResNet-18/34). Expansion 1.
class BasicBlock : public Block {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t in, int64_t width, int64_t stride)
      : conv1_(register_module("conv1", ResnetConv(in, width, 3, stride))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(width))),
        conv2_(register_module("conv2", ResnetConv(width, width, 3, 1))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(width))) {
    if (stride != 1 || in != width) {
      downsample_ = register_module("downsample", Downsample(in, width, stride));
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = bn1_->forward(conv1_->forward(x)).relu_();
    out = bn2_->forward(conv2_->forward(out));
    out += downsample_ ? downsample_->forward(x) : x;
    return torch::relu_(out);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Sequential downsample_{nullptr};
};

// 1x1 reduce, 3x3 (strided, v1.5), 1x1 expand x4 (ResNet-50/101/152).
class Bottleneck : public Block {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t in, int64_t width, int64_t stride)
      : conv1_(register_module("conv1", ResnetConv(in, width, 1, 1))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(width))),
        conv2_(register_module("conv2", ResnetConv(width, width, 3, stride))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(width))),
        conv3_(register_module("conv3", ResnetConv(width, width * kExpansion, 1, 1))),
        bn3_(register_module("bn3", torch::nn::BatchNorm2d(width * kExpansion))) {
    if (stride != 1 || in != width * kExpansion) {
      downsample_ = register_module("downsample", Downsample(in, width * kExpansion, stride));
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = bn1_->forward(conv1_->forward(x)).relu_();
    out = bn2_->forward(conv2_->forward(out)).relu_();
    out = bn3_->forward(conv3_->forward(out));
    out += downsample_ ? downsample_->forward(x) : x;
    return torch::relu_(out);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Conv2d conv3_;
  torch::nn::BatchNorm2d bn3_;
  torch::nn::Sequential downsample_{nullptr};
};

template <typename BlockType>
class ResNet : public Model {
 public:
  ResNet(const std::array<int64_t, 4>& blocks_per_stage, int64_t num_classes)
      : conv1_(register_module("conv1", ResnetConv(3, 64, 7, 2))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(64))) {
    int64_t in = 64;
    for (size_t stage = 0; stage < 4; ++stage) {
      const int64_t width = int64_t{64} << stage;
      auto list = register_module("layer" + std::to_string(stage + 1), torch::nn::ModuleList());
      for (int64_t i = 0; i < blocks_per_stage[stage]; ++i) {
        const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
        auto block = std::make_shared<BlockType>(in, width, stride);
        list->push_back(block);
        blocks_.push_back(block);
        in = width * BlockType::kExpansion;
      }
    }
    fc_ = register_module("fc", torch::nn::Linear(in, num_classes));
    InitWeights(*this, InitStyle::kKaimingFanOut);
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = bn1_->forward(conv1_->forward(x)).relu_();
    x = torch::max_pool2d(x, 3, 2, 1);
    for (const std::shared_ptr<Block>& block : blocks_) x = block->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  std::vector<std::shared_ptr<Block>> blocks_;  // also registered, as layer1..layer4
  torch::nn::Linear fc_{nullptr};
};

template <typename BlockType>
void Add(ModelRegistry& registry, const std::string& name, std::array<int64_t, 4> stages,
         const std::string& description) {
  Status s = registry.Register({name, description, {3, 224, 224}, 1000, [stages] {
                                  return std::make_shared<ResNet<BlockType>>(stages, 1000);
                                }});
  assert(s.ok());
  (void)s;
}

}  // namespace

void RegisterResNet(ModelRegistry& registry) {
  Add<BasicBlock>(registry, "resnet18", {2, 2, 2, 2}, "ResNet-18, 3x224x224, 11.7M parameters");
  Add<BasicBlock>(registry, "resnet34", {3, 4, 6, 3}, "ResNet-34, 3x224x224, 21.8M parameters");
  Add<Bottleneck>(registry, "resnet50", {3, 4, 6, 3},
                  "ResNet-50 v1.5, 3x224x224, 25.6M parameters");
  Add<Bottleneck>(registry, "resnet101", {3, 4, 23, 3},
                  "ResNet-101 v1.5, 3x224x224, 44.5M parameters");
  Add<Bottleneck>(registry, "resnet152", {3, 8, 36, 3},
                  "ResNet-152 v1.5, 3x224x224, 60.2M parameters");
}

}  // namespace dljob::trainer
