// Dataset: a labelled image set held in memory as two tensors.
//
// `images` is float32 [N, C, H, W] (already normalised); `labels` is int64 [N] with values in
// [0, num_classes). A Dataset is a value; copying it shares the tensors' storage (LibTorch
// semantics). Read-only after construction, so safe to read from any thread.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace dljob::trainer {

struct Dataset {
  torch::Tensor images;
  torch::Tensor labels;
  int64_t num_classes = 0;

  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

}  // namespace dljob::trainer
