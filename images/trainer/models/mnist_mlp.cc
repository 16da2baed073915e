// mnist_mlp: a one-hidden-layer perceptron for 28x28 grey images; tiny and fast, for tests.
#include <torch/torch.h>

#include "images/trainer/models/builtin.h"

namespace dljob::trainer {
namespace {

class MnistMlp : public Model {
 public:
  MnistMlp()
      : fc1_(register_module("fc1", torch::nn::Linear(28 * 28, 32))),
        fc2_(register_module("fc2", torch::nn::Linear(32, 10))) {}

  torch::Tensor forward(torch::Tensor x) override {
    return fc2_->forward(torch::relu(fc1_->forward(x.flatten(1))));
  }

 private:
  torch::nn::Linear fc1_;
  torch::nn::Linear fc2_;
};

}  // namespace

void RegisterMnistMlp(ModelRegistry& registry) {
  Status s = registry.Register(
      {"mnist_mlp", "784-32-10 perceptron for 28x28 grey images", {1, 28, 28}, 10, [] {
         return std::make_shared<MnistMlp>();
       }});
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
