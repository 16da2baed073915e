#include "images/trainer/models/model.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/models/builtin.h"

namespace dljob::trainer {
namespace {

// The ImageNet models have their own test (imagenet_models_test.cc) at batch 1.
TEST(ModelRegistryTest, MnistModelsProduceLogitsOfTheDeclaredShape) {
  ModelRegistry registry = BuiltinModels();
  torch::manual_seed(1);
  for (const char* name : {"mnist_cnn", "mnist_mlp"}) {
    Result<const ModelInfo*> info = registry.Find(name);
    ASSERT_TRUE(info.ok());
    ModelPtr model = (*info)->create();
    std::vector<int64_t> shape = {5};
    shape.insert(shape.end(), (*info)->input_shape.begin(), (*info)->input_shape.end());
    torch::Tensor logits = model->forward(torch::randn(shape));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{5, (*info)->num_classes})) << name;
    EXPECT_FALSE(model->parameters().empty());
  }
}

TEST(ModelRegistryTest, UnknownNameListsTheKnownOnes) {
  ModelRegistry registry = BuiltinModels();
  Result<const ModelInfo*> info = registry.Find("mnist_cn");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(info.status().message(),
            "unknown model \"mnist_cn\" (known models: alexnet, googlenet, inception3, lstm_lm, "
            "mnist_cnn, mnist_mlp, resnet101, resnet152, resnet18, resnet34, resnet50, vgg16)");
  EXPECT_EQ(UnknownModelHint("mnist_cn", registry.Names()), "did you mean --model=mnist_cnn?");
  EXPECT_EQ(UnknownModelHint("resnet5", registry.Names()), "did you mean --model=resnet50?");
  EXPECT_EQ(UnknownModelHint("transformer", registry.Names()),
            "pass --model=<name> with one of the known models");
}

TEST(ModelRegistryTest, RejectsDuplicatesAndEmptyRegistrations) {
  ModelRegistry registry;
  RegisterMnistMlp(registry);
  ModelInfo again = *registry.Find("mnist_mlp").value();
  EXPECT_EQ(registry.Register(again).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Register(ModelInfo{}).code(), StatusCode::kInvalidArgument);
}

TEST(EditDistanceTest, Basics) {
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("mnist_cnn", "mnist_cnn"), 0u);
}

}  // namespace
}  // namespace dljob::trainer
