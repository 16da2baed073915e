// ClippedSgd: LibTorch's SGD whose step first scales all gradients down, together, so that their
// global L2 norm is at most `max_norm` (torch::nn::utils::clip_grad_norm_), as the LSTM language
// model recipes do. It clips whatever gradients the step sees: after the allreduce on every rank
// (all ranks clip the same mean), on rank 0 alone under the parameter server. max_norm <= 0: plain
// SGD. Same thread-safety as torch::optim::SGD.
#pragma once

#include <utility>
#include <vector>

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/sgd.h>

namespace dljob::trainer {

class ClippedSgd : public torch::optim::SGD {
 public:
  ClippedSgd(std::vector<torch::Tensor> params, torch::optim::SGDOptions options, double max_norm)
      : SGD(params, std::move(options)), params_(std::move(params)), max_norm_(max_norm) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    if (max_norm_ > 0) torch::nn::utils::clip_grad_norm_(params_, max_norm_);
    return SGD::step(std::move(closure));
  }

 private:
  std::vector<torch::Tensor> params_;
  double max_norm_;
};

}  // namespace dljob::trainer
