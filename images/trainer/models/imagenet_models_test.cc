// The ImageNet models against torchvision's published parameter counts, tensor counts, and the
// shape of one forward pass. The counts are the independent check of each architecture: a
// misplaced stride or width changes the output shape or the count.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/flags.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/models/layers.h"

namespace dljob::trainer {
namespace {

struct Expected {
  std::string name;
  int64_t parameters;  // torchvision's published num_params (googlenet, inception3: no aux)
  int64_t tensors;
  int64_t image_size;
};

const std::vector<Expected>& ImagenetModels() {
  static const std::vector<Expected> models = {
      {"resnet18", 11'689'512, 62, 224},
      {"resnet34", 21'797'672, 110, 224},
      {"resnet50", 25'557'032, 161, 224},
      {"resnet101", 44'549'160, 314, 224},
      {"resnet152", 60'192'808, 467, 224},
      {"vgg16", 138'357'544, 32, 224},
      {"alexnet", 61'100'840, 16, 224},
      {"googlenet", 6'624'904, 173, 224},
      // torchvision inception_v3: 27,161,264 including the 3,326,696 of its AuxLogits head.
      {"inception3", 27'161'264 - 3'326'696, 284, 299},
  };
  return models;
}

class ImagenetModelTest : public ::testing::TestWithParam<Expected> {};

TEST_P(ImagenetModelTest, MatchesTorchvisionCountsAndClassifiesOneImage) {
  const Expected& expected = GetParam();
  ModelRegistry registry = BuiltinModels();
  Result<const ModelInfo*> info = registry.Find(expected.name);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ((*info)->input_shape,
            (std::vector<int64_t>{3, expected.image_size, expected.image_size}));
  EXPECT_EQ((*info)->num_classes, 1000);

  torch::manual_seed(1);
  ModelPtr model = (*info)->create();
  EXPECT_EQ(ParameterCount(*model), expected.parameters);
  EXPECT_EQ(ParameterTensorCount(*model), expected.tensors);

  torch::NoGradGuard no_grad;
  model->eval();
  torch::Tensor logits =
      model->forward(torch::randn({1, 3, expected.image_size, expected.image_size}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{1, 1000}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

INSTANTIATE_TEST_SUITE_P(All, ImagenetModelTest, ::testing::ValuesIn(ImagenetModels()),
                         [](const ::testing::TestParamInfo<Expected>& p) { return p.param.name; });

TEST(ImagenetModelsTest, RegistryListsEveryModel) {
  std::vector<std::string> names = BuiltinModels().Names();
  for (const Expected& e : ImagenetModels()) {
    EXPECT_NE(std::find(names.begin(), names.end(), e.name), names.end()) << e.name;
  }
  EXPECT_EQ(names.size(), ImagenetModels().size() + 3);  // + mnist_cnn, mnist_mlp, lstm_lm
}

TEST(ImagenetModelsTest, HelpAndAMistypedModelListEveryName) {
  const std::vector<std::string> names = BuiltinModels().Names();
  std::ostringstream out, err;
  TrainConfig config;
  const char* argv[] = {"dljob-train", "--help"};
  ASSERT_EQ(ParseFlags(2, argv, names, &config, out, err), 0);
  Result<const ModelInfo*> typo = BuiltinModels().Find("resnet-50");
  ASSERT_FALSE(typo.ok());
  for (const std::string& name : names) {
    EXPECT_NE(out.str().find(name), std::string::npos) << name;
    EXPECT_NE(typo.status().message().find(name), std::string::npos) << name;
  }
  EXPECT_EQ(UnknownModelHint("resnet-50", names), "did you mean --model=resnet50?");
}

TEST(ImagenetModelsTest, ConvolutionsGetKaimingFanOutAndBatchNormStartsAtIdentity) {
  torch::manual_seed(3);
  ModelPtr model = BuiltinModels().Find("resnet50").value()->create();
  for (const auto& item : model->named_parameters()) {
    const std::string& name = item.key();
    const torch::Tensor& p = item.value();
    if (name == "conv1.weight") {
      // kaiming_normal(fan_out, relu): std = sqrt(2 / (64 * 7 * 7)) = 0.0253.
      EXPECT_NEAR(p.std().item<double>(), std::sqrt(2.0 / (64 * 7 * 7)), 0.002);
    } else if (name == "bn1.weight") {
      EXPECT_TRUE(torch::equal(p, torch::ones_like(p)));
    } else if (name == "bn1.bias") {
      EXPECT_TRUE(torch::equal(p, torch::zeros_like(p)));
    }
  }
}

}  // namespace
}  // namespace dljob::trainer
