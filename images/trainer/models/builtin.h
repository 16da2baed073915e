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

// The ImageNet classifiers (3x224x224 in, 1000 classes; inception3 takes 3x299x299), with
// torchvision's architectures, parameter counts and initialisation:
// resnet18, resnet34, resnet50, resnet101, resnet152 (v1.5 bottlenecks for 50 and up).
void RegisterResNet(ModelRegistry& registry);
// vgg16 (no batch norm).
void RegisterVgg(ModelRegistry& registry);
// alexnet (torchvision's one-GPU variant).
void RegisterAlexNet(ModelRegistry& registry);
// googlenet (Inception v1, batch-normalised, without the auxiliary classifiers).
void RegisterGoogLeNet(ModelRegistry& registry);
// inception3 (InceptionV3, 3x299x299, without the auxiliary classifier).
void RegisterInception3(ModelRegistry& registry);

// lstm_lm (word-level LSTM language model; Task::kLanguageModel).
void RegisterLstmLanguageModel(ModelRegistry& registry);

// A registry holding every built-in model.
ModelRegistry BuiltinModels();

}  // namespace dljob::trainer
