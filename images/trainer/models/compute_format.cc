#include "images/trainer/models/compute_format.h"

#include <utility>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace dljob::trainer {
namespace {

// What torch.autocast("cuda", torch.float16) does on entry and exit, as a scope.
class CudaAutocastScope {
 public:
  CudaAutocastScope() : previous_(at::autocast::is_enabled()) {
    at::autocast::set_autocast_gpu_dtype(at::kHalf);
    at::autocast::set_enabled(true);
    at::autocast::increment_nesting();
  }
  ~CudaAutocastScope() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_enabled(previous_);
  }
  CudaAutocastScope(const CudaAutocastScope&) = delete;
  CudaAutocastScope& operator=(const CudaAutocastScope&) = delete;

 private:
  bool previous_;
};

void ConvertToChannelsLast(torch::Tensor& t) {
  if (t.defined() && t.dim() == 4) t.set_data(t.contiguous(at::MemoryFormat::ChannelsLast));
}

}  // namespace

void ToChannelsLast(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : module.parameters()) ConvertToChannelsLast(p);
  for (torch::Tensor& b : module.buffers()) ConvertToChannelsLast(b);
}

Status CheckMixedPrecisionDevice(const torch::Device& device) {
  if (device.is_cuda()) return Status::Ok();
  return Status::InvalidArgument(
      "--use_fp16 needs a CUDA device, and this rank runs on " + device.str() +
      " (float16 autocast is CUDA-only; LibTorch's CPU autocast does bfloat16)");
}

AutocastModel::AutocastModel(ModelPtr inner) : inner_(register_module("model", std::move(inner))) {}

torch::Tensor AutocastModel::forward(torch::Tensor input) {
  torch::Tensor logits;
  {
    CudaAutocastScope autocast;
    logits = inner_->forward(input);
  }
  return logits.to(torch::kFloat32);
}

Batch ChannelsLastDataSource::Get(int64_t epoch, int64_t step) {
  return ChannelsLast(source_.Get(epoch, step));
}

Batch ChannelsLastDataSource::GetAt(int64_t epoch, int64_t offset, int64_t global_batch) {
  return ChannelsLast(source_.GetAt(epoch, offset, global_batch));
}

Batch ChannelsLastDataSource::ChannelsLast(Batch batch) {
  // A source that hands out the same tensor every step (synthetic data) is converted once.
  if (!batch.images.is_same(last_input_)) {
    last_input_ = batch.images;
    last_output_ = batch.images.contiguous(at::MemoryFormat::ChannelsLast);
  }
  batch.images = last_output_;
  return batch;
}

}  // namespace dljob::trainer
