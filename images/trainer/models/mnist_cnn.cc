// mnist_cnn: a small convolutional network for 28x28 grey images (Fashion-MNIST).
#include <torch/torch.h>

#include "images/trainer/models/builtin.h"

namespace dljob::trainer {
namespace {

class MnistCnn : public Model {
 public:
  MnistCnn()
      : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3)))),
        conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3)))),
        fc1_(register_module("fc1", torch::nn::Linear(64 * 5 * 5, 128))),
        fc2_(register_module("fc2", torch::nn::Linear(128, 10))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);  // 32 x 13 x 13
    x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);  // 64 x 5 x 5
    x = torch::relu(fc1_->forward(x.flatten(1)));
    return fc2_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::Conv2d conv2_;
  torch::nn::Linear fc1_;
  torch::nn::Linear fc2_;
};

}  // namespace

void RegisterMnistCnn(ModelRegistry& registry) {
  Status s = registry.Register({"mnist_cnn",
                                "2 conv + 2 fc layers for 28x28 grey images, no batch norm",
                                {1, 28, 28},
                                10,
                                [] { return std::make_shared<MnistCnn>(); }});
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
