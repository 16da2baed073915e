// Shard file names, labels.txt, and whole-directory inspect/verify.
#include "storage/dataset.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "storage/shard_writer.h"
#include "storage/testing/test_data.h"

namespace dljob::storage {
namespace {
namespace fs = std::filesystem;

TEST(ShardNameTest, FormatsAndParses) {
  EXPECT_EQ(ShardFileName("train", 3, 4), "train-00003-of-00004.shard");
  auto n = ParseShardFileName("my_split-00012-of-00100.shard");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->split, "my_split");
  EXPECT_EQ(n->index, 12);
  EXPECT_EQ(n->count, 100);
}

TEST(ShardNameTest, RejectsEverythingElse) {
  for (const char* bad :
       {"train-00000-of-00001.shard.tmp", ".train-00000.shard.tmp", "train-00001-of-00001.shard",
        "train-0-of-1.shard", "-00000-of-00001.shard", "train-00000-of-00000.shard",
        "tr ain-00000-of-00001.shard", "labels.txt", "train-0000a-of-00001.shard", ".shard",
        "-of-.shard", "x-of-00001.shard"}) {
    EXPECT_FALSE(ParseShardFileName(bad)) << bad;
  }
}

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dataset_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Pack(const std::string& split, int n, uint64_t per_shard, uint32_t label_mod = 3) {
    auto w = ShardWriter::Create(dir_, split, {.max_records_per_shard = per_shard});
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE((*w)->Append(testdata::RawSample(i % label_mod, 2, 2, i)).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  std::string dir_;
};

TEST_F(DatasetTest, InspectsSplitsShardsAndClasses) {
  Pack("train", 10, 3);
  Pack("test", 4, 0);
  ASSERT_TRUE(WriteLabels(dir_, {"a", "b", "c"}).ok());
  auto info = InspectDataset(dir_);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->classes, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(info->splits.size(), 2u);
  EXPECT_EQ(info->splits[0].name, "test");
  EXPECT_EQ(info->splits[1].name, "train");
  EXPECT_EQ(info->splits[1].shards.size(), 4u);
  EXPECT_EQ(info->splits[1].records, 10u);
  EXPECT_EQ(info->records(), 14u);
  EXPECT_TRUE(VerifyDataset(*info).ok());
}

TEST_F(DatasetTest, AMissingShardMakesTheSplitIncomplete) {
  Pack("train", 10, 3);
  fs::remove(dir_ + "/train-00002-of-00004.shard");
  auto info = InspectDataset(dir_);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("incomplete: expected train-00002-of-00004.shard"),
            std::string::npos)
      << info.status().message();
}

TEST_F(DatasetTest, EmptyOrMissingDirectoryIsNotFound) {
  EXPECT_EQ(InspectDataset(dir_).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(InspectDataset(dir_ + "/nope").status().code(), StatusCode::kNotFound);
}

TEST_F(DatasetTest, LabelsAreReplacedWholeAndAMissingFileIsNamed) {
  Result<std::vector<std::string>> missing = ReadLabels(dir_);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir_ + "/" + kLabelsFile), std::string::npos)
      << missing.status().message();
  ASSERT_TRUE(WriteLabels(dir_, {"cat", "", "dog"}).ok());
  ASSERT_TRUE(WriteLabels(dir_, {"a", "b"}).ok());
  EXPECT_EQ(*ReadLabels(dir_), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(WriteLabels(dir_, {"cat", "", "dog"}).ok());
  EXPECT_EQ(*ReadLabels(dir_), (std::vector<std::string>{"cat", "", "dog"}));
  EXPECT_EQ(WriteLabels(dir_, {"bad\nname"}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*ReadLabels(dir_), (std::vector<std::string>{"cat", "", "dog"}));
  // Nothing but the labels file: no temporary left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{kLabelsFile});
}

TEST_F(DatasetTest, VerifyRejectsLabelsBeyondTheClassList) {
  Pack("train", 5, 0, 5);
  ASSERT_TRUE(WriteLabels(dir_, {"a", "b"}).ok());
  auto info = InspectDataset(dir_);
  ASSERT_TRUE(info.ok());
  Status s = VerifyDataset(*info);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("record 2: label 2 but labels.txt names only 2 classes"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace dljob::storage
