#include "images/trainer/data/fashion_mnist.h"

#include <filesystem>

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace dljob::trainer {
namespace {

IdxArray Images(int64_t n) {
  IdxArray a;
  a.dims = {n, 28, 28};
  a.data.resize(static_cast<size_t>(n * 28 * 28));
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<uint8_t>(i % 256);
  return a;
}

IdxArray Labels(std::vector<uint8_t> values) {
  IdxArray a;
  a.dims = {static_cast<int64_t>(values.size())};
  a.data = std::move(values);
  return a;
}

TEST(FashionMnistTest, NormalisesWithTheTrainingStatistics) {
  Result<Dataset> d = FashionMnistFromIdx(Images(2), Labels({3, 9}), "t");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->images.sizes(), (std::vector<int64_t>{2, 1, 28, 28}));
  EXPECT_EQ(d->labels.scalar_type(), torch::kInt64);
  EXPECT_EQ(d->labels[1].item<int64_t>(), 9);
  // pixel 0 is 0, pixel 255 (index 255) is 255.
  const float* p = d->images.data_ptr<float>();
  EXPECT_NEAR(p[0], (0.0f - kFashionMnistMean) / kFashionMnistStd, 1e-6);
  EXPECT_NEAR(p[255], (1.0f - kFashionMnistMean) / kFashionMnistStd, 1e-6);
}

TEST(FashionMnistTest, RejectsMismatchedShapesAndLabels) {
  EXPECT_FALSE(FashionMnistFromIdx(Images(2), Labels({1}), "t").ok());
  Result<Dataset> bad_label = FashionMnistFromIdx(Images(2), Labels({1, 10}), "t");
  ASSERT_FALSE(bad_label.ok());
  EXPECT_NE(bad_label.status().message().find("label 10 at index 1"), std::string::npos);
  IdxArray wrong = Images(1);
  wrong.dims = {1, 784};
  EXPECT_FALSE(FashionMnistFromIdx(wrong, Labels({1}), "t").ok());
}

TEST(FashionMnistTest, MissingDirectoryIsNotFound) {
  Result<Dataset> d = LoadFashionMnist("/nonexistent/fashion", Split::kTrain);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound);
}

TEST(FashionMnistTest, RealDatasetWhenInstalled) {
  if (!std::filesystem::exists(kDefaultFashionMnistDir)) {
    GTEST_FAIL() << "dataset-fashion-mnist is not installed: run scripts/dev/setup.sh";
  }
  Result<Dataset> train = LoadFashionMnist(kDefaultFashionMnistDir, Split::kTrain);
  Result<Dataset> test = LoadFashionMnist(kDefaultFashionMnistDir, Split::kTest);
  ASSERT_TRUE(train.ok()) << train.status().message();
  ASSERT_TRUE(test.ok()) << test.status().message();
  EXPECT_EQ(train->images.sizes(), (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(test->images.sizes(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_EQ(train->labels.min().item<int64_t>(), 0);
  EXPECT_EQ(train->labels.max().item<int64_t>(), 9);
  // Balanced classes: 6000 / 1000 of each.
  EXPECT_EQ(train->labels.bincount().min().item<int64_t>(), 6000);
  EXPECT_EQ(test->labels.bincount().max().item<int64_t>(), 1000);
  // The normalisation constants are the training set's own statistics.
  EXPECT_NEAR(train->images.mean().item<float>(), 0.0f, 1e-3);
  EXPECT_NEAR(train->images.std().item<float>(), 1.0f, 1e-3);
}

}  // namespace
}  // namespace dljob::trainer
