// How a model computes, chosen at run time by --data_format and --use_fp16:
//
// - Memory format. NCHW is LibTorch's default; NHWC ("channels last") stores each pixel's
//   channels together, which cuDNN's tensor-core kernels and oneDNN prefer. ToChannelsLast
//   converts a model's 4-d parameters and buffers in place; ChannelsLastDataSource hands the
//   trainer its batches in the same format (the trainer's .to(device) preserves it), so every
//   convolution sees channels-last on both operands.
// - Precision. AutocastModel runs the wrapped model's forward under CUDA autocast (float16 for
//   convolutions and matrix products, float32 where autocast keeps it, e.g. softmax and the
//   loss), with float32 master weights and float32 logits out. Backward runs outside autocast, as
//   PyTorch prescribes. CUDA only: LibTorch's CPU autocast does bfloat16, not float16, so callers
//   must refuse --use_fp16 on the CPU (see CheckMixedPrecisionDevice). There is no loss scaling
//   yet (it needs the trainer to unscale gradients before the step).
//
// Thread-compatible, like the models and data sources they wrap.
#pragma once

#include <memory>
#include <string>

#include <torch/types.h>

#include "base/status.h"
#include "images/trainer/data/data_source.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

// Converts every 4-d parameter and buffer of `module` (and its children) to channels-last, in
// place. Call after moving the model to its device and before creating the optimizer.
void ToChannelsLast(torch::nn::Module& module);

// Ok when float16 mixed precision can run on `device`; otherwise InvalidArgument saying why.
Status CheckMixedPrecisionDevice(const torch::Device& device);

class AutocastModel : public Model {
 public:
  // REQUIRES: `inner` lives on a CUDA device (CheckMixedPrecisionDevice). `inner` is registered
  // as the submodule "model", so parameters() are the inner model's, in the same order.
  explicit AutocastModel(ModelPtr inner);
  torch::Tensor forward(torch::Tensor input) override;  // float32 logits

 private:
  ModelPtr inner_;
};

// Wraps `source`'s batches: images come out channels-last. `source` is borrowed and must outlive
// this object.
class ChannelsLastDataSource : public DataSource {
 public:
  explicit ChannelsLastDataSource(DataSource& source) : source_(source) {}
  int64_t steps_per_epoch() const override { return source_.steps_per_epoch(); }
  Batch Get(int64_t epoch, int64_t step) override;
  bool elastic() const override { return source_.elastic(); }
  int64_t epoch_samples(int64_t global_batch) const override {
    return source_.epoch_samples(global_batch);
  }
  Batch GetAt(int64_t epoch, int64_t offset, int64_t global_batch) override;

 private:
  Batch ChannelsLast(Batch batch);

  DataSource& source_;
  torch::Tensor last_input_;   // the most recent images from source_
  torch::Tensor last_output_;  // ...and their channels-last copy
};

}  // namespace dljob::trainer
