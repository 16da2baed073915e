// Fashion-MNIST from record shards: IDX files packed as `dljob data pack` does, read back into the
// very Dataset the IDX loader makes (and through MakeTrainingData, the same batches); damaged or
// foreign shards fail with the shard's name; an oss:// --data_dir reads the shards straight from
// a real S3-compatible server (s3rver: without it the test fails, naming scripts/dev/setup.sh).
#include "images/trainer/data/fashion_mnist_shards.h"

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/data/training_data.h"
#include "storage/dataset.h"
#include "storage/objstore/open_store.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "storage/pack.h"
#include "storage/testing/test_data.h"
#include "testing/command.h"

namespace dljob::trainer {
namespace {

namespace fs = std::filesystem;

class FashionMnistShardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(idx());
    storage::testdata::WriteIdxPair(idx(), "train", 50);
    storage::testdata::WriteIdxPair(idx(), "t10k", 12);
    storage::PackOptions pack;
    pack.shard.max_records_per_shard = 16;  // train: 4 shards, test: 1
    Result<storage::PackResult> packed = storage::PackDataset(idx(), shards(), pack);
    ASSERT_TRUE(packed.ok()) << packed.status().message();
    ASSERT_EQ(packed->splits.size(), 2u);
  }
  std::string idx() const { return dir_.path() + "/idx"; }
  std::string shards() const { return dir_.path() + "/shards"; }

  static void ExpectSame(const Dataset& a, const Dataset& b) {
    EXPECT_EQ(a.num_classes, b.num_classes);
    ASSERT_EQ(a.images.sizes(), b.images.sizes());
    EXPECT_TRUE(torch::equal(a.images, b.images));
    EXPECT_TRUE(torch::equal(a.labels, b.labels));
  }

  dljob::testing::TempDir dir_;
};

TEST_F(FashionMnistShardsTest, ShardsLoadIntoTheDatasetTheIdxFilesGive) {
  EXPECT_TRUE(IsFashionMnistShardDir(shards()));
  EXPECT_FALSE(IsFashionMnistShardDir(idx()));
  for (Split split : {Split::kTrain, Split::kTest}) {
    Result<Dataset> from_idx = LoadFashionMnist(idx(), split);
    Result<Dataset> from_shards = LoadFashionMnistShards(shards(), split);
    ASSERT_TRUE(from_idx.ok()) << from_idx.status().message();
    ASSERT_TRUE(from_shards.ok()) << from_shards.status().message();
    EXPECT_EQ(from_shards->size(), split == Split::kTrain ? 50 : 12);
    ExpectSame(*from_idx, *from_shards);
  }
}

TEST_F(FashionMnistShardsTest, TrainingDataFromShardsGivesTheSameBatchesAsFromIdx) {
  auto make = [](const std::string& dir) {
    TrainingDataOptions o;
    o.data_name = DataName::kFashionMnist;
    o.data_dir = dir;
    o.input_shape = {1, 28, 28};
    o.num_classes = 10;
    o.world = 2;
    o.rank = 1;
    o.batch_size = 4;
    o.seed = 5;
    return MakeTrainingData(o);
  };
  Result<TrainingData> from_idx = make(idx());
  Result<TrainingData> from_shards = make(shards());
  ASSERT_TRUE(from_idx.ok()) << from_idx.status().message();
  ASSERT_TRUE(from_shards.ok()) << from_shards.status().message();
  EXPECT_NE(from_shards->description.find("from record shards"), std::string::npos);
  EXPECT_EQ(from_shards->train_examples, 50);
  ASSERT_EQ(from_shards->train->steps_per_epoch(), from_idx->train->steps_per_epoch());
  for (int64_t epoch : {0, 1}) {
    for (int64_t step = 0; step < from_idx->train->steps_per_epoch(); ++step) {
      Batch a = from_idx->train->Get(epoch, step);
      Batch b = from_shards->train->Get(epoch, step);
      ASSERT_TRUE(torch::equal(a.images, b.images)) << epoch << "/" << step;
      ASSERT_TRUE(torch::equal(a.labels, b.labels)) << epoch << "/" << step;
    }
  }
  ASSERT_TRUE(from_shards->test.has_value());
  ExpectSame(*from_idx->test, *from_shards->test);
}

TEST_F(FashionMnistShardsTest, ACorruptRecordFailsNamingTheShardAndByte) {
  const std::string shard = shards() + "/" + storage::ShardFileName("train", 2, 4);
  std::vector<uint8_t> bytes = storage::testdata::ReadBytes(shard);
  // Record 0's payload starts at 16 + 8; flip a pixel byte well inside record 1.
  const size_t record = 8 + storage::kSampleHeaderBytes + 28 * 28;
  bytes[16 + record + 8 + storage::kSampleHeaderBytes + 100] ^= 0x40;
  storage::testdata::WriteBytes(shard, bytes);

  Result<Dataset> d = LoadFashionMnistShards(shards(), Split::kTrain);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  const std::string m = d.status().message();
  EXPECT_NE(m.find(shard + ": at byte " + std::to_string(16 + record) + ": record 1: payload CRC"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("re-pack it with `dljob data pack"), std::string::npos) << m;
  // The test split is intact and still loads.
  EXPECT_TRUE(LoadFashionMnistShards(shards(), Split::kTest).ok());

  TrainingDataOptions o;
  o.data_name = DataName::kFashionMnist;
  o.data_dir = shards();
  o.input_shape = {1, 28, 28};
  o.num_classes = 10;
  Result<TrainingData> data = MakeTrainingData(o);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().message().rfind(
                "cannot read Fashion-MNIST from \"" + shards() + "\": " + shard + ": at byte ", 0),
            0u)
      << data.status().message();
}

TEST_F(FashionMnistShardsTest, AMissingShardOrSplitIsReported) {
  fs::remove(shards() + "/" + storage::ShardFileName("test", 0, 1));
  Result<Dataset> test = LoadFashionMnistShards(shards(), Split::kTest);
  ASSERT_FALSE(test.ok());
  EXPECT_EQ(test.status().code(), StatusCode::kNotFound);
  EXPECT_NE(test.status().message().find("no shards of split \"test\""), std::string::npos)
      << test.status().message();

  fs::remove(shards() + "/" + storage::ShardFileName("train", 1, 4));
  Result<Dataset> train = LoadFashionMnistShards(shards(), Split::kTrain);
  ASSERT_FALSE(train.ok());
  EXPECT_NE(train.status().message().find(shards() + ": split \"train\" is incomplete"),
            std::string::npos)
      << train.status().message();
}

TEST_F(FashionMnistShardsTest, ShardsOfAnotherDatasetAreRefusedNamingTheRecord) {
  storage::testdata::WriteJpegTree(dir_.path() + "/jpeg", {"cat", "dog"}, 2);
  ASSERT_TRUE(storage::PackDataset(dir_.path() + "/jpeg", dir_.path() + "/jpeg-shards", {}).ok());
  Result<Dataset> d = LoadFashionMnistShards(dir_.path() + "/jpeg-shards", Split::kTrain);
  ASSERT_FALSE(d.ok());
  const std::string m = d.status().message();
  EXPECT_NE(m.find("train-00000-of-00001.shard: at byte 16: record 0: a jpeg "), std::string::npos)
      << m;
  EXPECT_NE(m.find("not raw 28x28 grey pixels"), std::string::npos) << m;
}

TEST_F(FashionMnistShardsTest, ADirectoryWithNeitherIdxNorShardsSaysBoth) {
  TrainingDataOptions o;
  o.data_name = DataName::kFashionMnist;
  o.data_dir = dir_.path();  // holds only the idx/ and shards/ folders
  o.input_shape = {1, 28, 28};
  o.num_classes = 10;
  Result<TrainingData> data = MakeTrainingData(o);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kNotFound);
  EXPECT_NE(data.status().message().find("no record shards (train-*.shard) either"),
            std::string::npos)
      << data.status().message();
}

TEST_F(FashionMnistShardsTest, TheRealDatasetPacksIntoTheSameDataset) {
  const std::string real = kDefaultFashionMnistDir;
  if (!fs::exists(real + "/train-images-idx3-ubyte.gz")) {
    GTEST_FAIL() << "dataset-fashion-mnist is not installed: run scripts/dev/setup.sh";
  }
  const std::string packed = dir_.path() + "/real";
  ASSERT_TRUE(storage::PackDataset(real, packed, {}).ok());
  for (Split split : {Split::kTrain, Split::kTest}) {
    Result<Dataset> from_idx = LoadFashionMnist(real, split);
    Result<Dataset> from_shards = LoadFashionMnistShards(packed, split);
    ASSERT_TRUE(from_idx.ok()) << from_idx.status().message();
    ASSERT_TRUE(from_shards.ok()) << from_shards.status().message();
    EXPECT_EQ(from_shards->size(), split == Split::kTrain ? 60000 : 10000);
    ExpectSame(*from_idx, *from_shards);
  }
}

// --data_dir=oss://bucket/prefix: the shards read with ranged GETs, endpoint and credentials from
// the environment as a job has them.
TEST_F(FashionMnistShardsTest, AnOssDataDirReadsTheShardsFromTheObjectStore) {
  storage::testing::S3rverProcess server("datasets");
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  std::map<std::string, std::string> env = {{"OSS_ENDPOINT", server.endpoint()},
                                            {"OSS_ACCESS_KEY_ID", "S3RVER"},
                                            {"OSS_ACCESS_KEY_SECRET", "S3RVER"}};
  storage::EnvLookup lookup = [&](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  Result<storage::OpenedSource> bucket = storage::OpenSource("oss://datasets", {}, lookup, "test");
  ASSERT_TRUE(bucket.ok()) << bucket.status().message();
  for (const auto& e : fs::directory_iterator(shards())) {
    std::vector<uint8_t> bytes = storage::testdata::ReadBytes(e.path().string());
    ASSERT_TRUE(
        bucket->store
            ->Put("fmnist/" + e.path().filename().string(), std::string(bytes.begin(), bytes.end()))
            .ok());
  }
  // ProcessEnv() reads the process's environment; set it for this test and restore it after.
  struct ScopedEnv {
    explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
      for (const auto& [k, v] : vars) {
        const char* old = std::getenv(k.c_str());
        saved.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
        setenv(k.c_str(), v.c_str(), 1);
      }
    }
    ~ScopedEnv() {
      for (const auto& [k, v] : saved)
        v ? (void)setenv(k.c_str(), v->c_str(), 1) : (void)unsetenv(k.c_str());
    }
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  } scoped(env);

  EXPECT_TRUE(IsFashionMnistShardDir("oss://datasets/fmnist"));
  for (Split split : {Split::kTrain, Split::kTest}) {
    Result<Dataset> from_idx = LoadFashionMnist(idx(), split);
    Result<Dataset> from_oss = LoadFashionMnistShards("oss://datasets/fmnist", split);
    ASSERT_TRUE(from_idx.ok()) << from_idx.status().message();
    ASSERT_TRUE(from_oss.ok()) << from_oss.status().message();
    ExpectSame(*from_idx, *from_oss);
  }
  Result<Dataset> missing = LoadFashionMnistShards("oss://datasets/nothing", Split::kTrain);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no shards of split \"train\""), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace dljob::trainer
