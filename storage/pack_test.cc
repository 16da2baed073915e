// PackDataset from IDX directories (test-made and, when installed, the real Fashion-MNIST) and
// from JPEG trees made by the test; then read back through ShardReader.
#include "storage/pack.h"

#include <unistd.h>

#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "storage/dataset.h"
#include "storage/idx_reader.h"
#include "storage/shard_reader.h"
#include "storage/testing/test_data.h"

namespace dljob::storage {
namespace {
namespace fs = std::filesystem;

constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";

class PackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("pack_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(src_ = root_ + "/src");
    out_ = root_ + "/out";
  }
  void TearDown() override { fs::remove_all(root_); }

  // All samples of a split, in record order, read back through the shards.
  std::vector<Sample> ReadSplit(const std::string& split) {
    auto info = InspectDataset(out_);
    EXPECT_TRUE(info.ok()) << info.status().message();
    std::vector<Sample> all;
    for (const SplitInfo& s : info->splits) {
      if (s.name != split) continue;
      for (const ShardInfo& shard : s.shards) {
        auto r = ShardReader::Open(shard.path);
        EXPECT_TRUE((*r)->ForEach([&](uint64_t, const Sample& x) {
                          all.push_back(x);
                          return Status::Ok();
                        })
                        .ok());
      }
    }
    return all;
  }

  std::string root_, src_, out_;
};

TEST_F(PackTest, IdxDirectoryRoundTrip) {
  std::vector<uint8_t> train = testdata::WriteIdxPair(src_, "train", 100);
  std::vector<uint8_t> test = testdata::WriteIdxPair(src_, "t10k", 30);
  PackOptions options;
  options.shard.max_records_per_shard = 32;
  std::vector<PackProgress> seen;
  auto result = PackDataset(src_, out_, options, [&](const PackProgress& p) { seen.push_back(p); });
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->source_kind, "idx");
  ASSERT_EQ(result->splits.size(), 2u);
  EXPECT_EQ(result->splits[0].shards.size(), 4u);  // 100 / 32
  EXPECT_EQ(result->classes.size(), 10u);
  EXPECT_EQ(seen.back().split, "test");
  EXPECT_EQ(seen.back().done, 30u);

  std::vector<Sample> got = ReadSplit("train");
  ASSERT_EQ(got.size(), 100u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], testdata::RawSample(train[i], 28, 28, i)) << i;
  }
  EXPECT_EQ(ReadSplit("test").size(), test.size());
  EXPECT_TRUE(VerifyDataset(*InspectDataset(out_)).ok());
}

TEST_F(PackTest, RealFashionMnistLabelsMatchTheIdxFiles) {
  if (!fs::exists(kFashionMnist))
    GTEST_FAIL()
        << kFashionMnist
        << " not installed: run scripts/dev/setup.sh (Debian package dataset-fashion-mnist)";
  auto result = PackDataset(kFashionMnist, out_, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->classes.front(), "T-shirt/top");
  for (const auto& [split, prefix, n] :
       {std::tuple{"train", "train", 60000}, std::tuple{"test", "t10k", 10000}}) {
    auto labels = ReadIdxFile(std::string(kFashionMnist) + "/" + prefix + "-labels-idx1-ubyte.gz");
    auto images = ReadIdxFile(std::string(kFashionMnist) + "/" + prefix + "-images-idx3-ubyte.gz");
    ASSERT_TRUE(labels.ok() && images.ok());
    std::vector<Sample> got = ReadSplit(split);
    ASSERT_EQ(got.size(), size_t(n)) << split;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].label, labels->data[i]) << split << " " << i;
      ASSERT_TRUE(
          std::equal(got[i].data.begin(), got[i].data.end(), images->data.begin() + i * 784))
          << split << " " << i;
    }
  }
}

TEST_F(PackTest, JpegTreeRoundTrip) {
  testdata::WriteJpegTree(src_, {"dog", "cat", "bird"}, 7);
  PackOptions options;
  options.shard.max_records_per_shard = 8;
  auto result = PackDataset(src_, out_, options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->source_kind, "jpeg");
  EXPECT_EQ(result->classes, (std::vector<std::string>{"bird", "cat", "dog"}));
  EXPECT_EQ(*ReadLabels(out_), result->classes);
  std::vector<Sample> got = ReadSplit("train");
  ASSERT_EQ(got.size(), 21u);
  std::map<uint32_t, int> per_label;
  for (const Sample& s : got) {
    ++per_label[s.label];
    EXPECT_EQ(s.format, SampleFormat::kJpeg);
    EXPECT_EQ(s.data[0], 0xFF);
    EXPECT_EQ(s.data[1], 0xD8);
    // The stored bytes are the file's bytes; dimensions come from its JPEG header.
    bool found = false;
    for (int k = 0; k < 7 && !found; ++k) {
      found = testdata::ReadBytes(src_ + "/" + result->classes[s.label] + "/" + std::to_string(k) +
                                  ".jpg") == s.data;
      if (found) {
        EXPECT_EQ(s.width, 16 + k);
        EXPECT_EQ(s.channels, k % 2 ? 1 : 3);
      }
    }
    EXPECT_TRUE(found);
  }
  EXPECT_EQ(per_label, (std::map<uint32_t, int>{{0, 7}, {1, 7}, {2, 7}}));
}

TEST_F(PackTest, JpegTreeWithSplitFolders) {
  testdata::WriteJpegTree(src_ + "/train", {"a", "b"}, 3);
  testdata::WriteJpegTree(src_ + "/val", {"a", "b"}, 2);
  auto result = PackDataset(src_, out_, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(ReadSplit("train").size(), 6u);
  EXPECT_EQ(ReadSplit("val").size(), 4u);
}

TEST_F(PackTest, BadJpegIsNamedAndNothingIsLeftBehind) {
  testdata::WriteJpegTree(src_, {"a"}, 2);
  testdata::WriteBytes(src_ + "/a/broken.jpg", {'n', 'o', 'p', 'e'});
  auto result = PackDataset(src_, out_, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(src_ + "/a/broken.jpg: not a readable JPEG"),
            std::string::npos)
      << result.status().message();
  EXPECT_TRUE(fs::is_empty(out_));
}

TEST_F(PackTest, SourceErrors) {
  EXPECT_EQ(PackDataset(root_ + "/missing", out_, {}).status().code(), StatusCode::kNotFound);
  auto empty = PackDataset(src_, out_, {});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("neither IDX files"), std::string::npos);
  testdata::WriteIdxPair(src_, "train", 3);
  fs::remove(src_ + "/train-labels-idx1-ubyte");
  auto half = PackDataset(src_, out_, {});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("has no matching labels file"), std::string::npos)
      << half.status().message();
}

}  // namespace
}  // namespace dljob::storage
