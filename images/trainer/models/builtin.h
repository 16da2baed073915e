// The models built into dljob-train. Each family registers itself with one function; adding a
// family (ResNet, VGG, ...) means a new file with its RegisterXxx and one line in BuiltinModels.
#pragma once

#include "images/trainer/models/model.h"

namespace dljob::trainer {

// mnist_cnn: two 3x3 conv + ReLU + max-pool stages (32, 64 channels), FC 1600 -> 128 -> 10.
// No batch norm, so per-sample gradients do not depend on the rest of the batch.
void RegisterMnistCnn(ModelRegistry& registry);

// mnist_mlp: 784 -> 32 -> 10 with ReLU. Tiny, for fast tests.
void RegisterMnistMlp(ModelRegistry& registry);

// A registry holding every built-in model.
ModelRegistry BuiltinModels();

}  // namespace dljob::trainer
