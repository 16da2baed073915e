// The loader end to end: a JPEG tree and an IDX pair packed with PackDataset, then loaded from
// the directory, through a LocalDirStore and (when installed) from s3rver.
#include "storage/loader/loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "storage/dataset.h"
#include "storage/objstore/local_dir_store.h"
#include "storage/objstore/s3_store.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "storage/pack.h"
#include "storage/testing/test_data.h"
#include "testing/command.h"

namespace dljob::storage::loader {
namespace {

namespace fs = std::filesystem;
using dljob::testing::TempDir;

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // 3 classes x 10 images, 3 shards of at most 11 records: 30 samples.
    testdata::WriteJpegTree(tree_.path() + "/src", {"cat", "dog", "eel"}, 10);
    PackOptions pack;
    pack.shard.max_records_per_shard = 11;
    Result<PackResult> packed = PackDataset(tree_.path() + "/src", data(), pack);
    ASSERT_TRUE(packed.ok()) << packed.status().message();
  }
  std::string data() const { return tree_.path() + "/data"; }

  static LoaderOptions Options(int world, int rank) {
    LoaderOptions o;
    o.batch_size = 4;
    o.threads = 2;
    o.epochs = 2;
    o.drop_last_batch = false;
    o.sampler.world_size = world;
    o.sampler.rank = rank;
    o.sampler.seed = 9;
    o.transform.output.width = 8;
    o.transform.output.height = 6;
    o.transform.seed = 9;
    return o;
  }

  static std::vector<Batch> Drain(Loader& loader) {
    std::vector<Batch> out;
    while (true) {
      Result<std::optional<Batch>> b = loader.Next();
      EXPECT_TRUE(b.ok()) << b.status().message();
      if (!b.ok() || !b->has_value()) return out;
      out.push_back(std::move(**b));
    }
  }

  TempDir tree_;
};

TEST_F(LoaderTest, TwoRanksSeeEverySampleOncePerEpochWithTheirLabels) {
  // The labels the shards hold, by global sample number.
  Result<ShardSet> reference = OpenLocalSplit(data(), "train");
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  ASSERT_EQ(reference->shards.size(), 3u);
  ASSERT_EQ(reference->classes, (std::vector<std::string>{"cat", "dog", "eel"}));
  std::vector<int64_t> labels;
  for (const auto& shard : reference->shards) {
    for (uint64_t i = 0; i < shard->num_records(); ++i) labels.push_back(shard->Read(i)->label);
  }
  ASSERT_EQ(labels.size(), 30u);

  std::map<int64_t, std::vector<uint64_t>> seen;  // epoch -> samples over both ranks
  std::vector<std::vector<uint64_t>> rank_orders;
  for (int rank = 0; rank < 2; ++rank) {
    Result<ShardSet> shards = OpenLocalSplit(data(), "train");
    ASSERT_TRUE(shards.ok());
    Result<LoaderPtr> loader = Loader::Open(std::move(shards).value(), Options(2, rank));
    ASSERT_TRUE(loader.ok()) << loader.status().message();
    EXPECT_EQ((*loader)->steps_per_epoch(), 4);  // 15 per rank: 4, 4, 4, 3
    std::vector<Batch> batches = Drain(**loader);
    ASSERT_EQ(batches.size(), 8u);
    for (size_t i = 0; i < batches.size(); ++i) {
      const Batch& b = batches[i];
      EXPECT_EQ(b.epoch, int64_t(i / 4));
      EXPECT_EQ(b.step, int64_t(i % 4));
      EXPECT_EQ(b.last_in_epoch, i % 4 == 3);
      EXPECT_EQ(b.count, i % 4 == 3 ? 3 : 4);
      ASSERT_EQ(b.data.size(), size_t(b.count * 8 * 6 * 3));
      for (int64_t k = 0; k < b.count; ++k) {
        EXPECT_EQ(b.labels[k], labels[b.samples[k]]) << "sample " << b.samples[k];
        seen[b.epoch].push_back(b.samples[k]);
      }
      for (float f : b.data) ASSERT_TRUE(std::isfinite(f) && f > -3 && f < 3);
    }
    // A finished loader keeps saying so.
    Result<std::optional<Batch>> again = (*loader)->Next();
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->has_value());
  }
  for (auto& [epoch, samples] : seen) {
    std::sort(samples.begin(), samples.end());
    std::vector<uint64_t> all(30);
    for (uint64_t i = 0; i < 30; ++i) all[i] = i;
    EXPECT_EQ(samples, all) << "epoch " << epoch;
  }
}

TEST_F(LoaderTest, DroppedBatchesLendTheirBuffersToLaterOnesWithoutChangingThem) {
  // What the contract promises whatever the worker's timing: a dropped batch's buffer goes back to
  // the pool and a later batch gets it (the pool keeps at most batches_in_flight spares, so none
  // lingers), and a held batch never changes. Whether the worker takes batch i's buffer before or
  // after the consumer drops batch i-1 is up to the scheduler, so the test never asserts which
  // batch gets which buffer, only what holds either way.
  LoaderOptions o = Options(1, 0);
  o.threads = 1;
  o.batches_in_flight = 1;   // at most 1 spare; batch i+1 is claimed once batch i is handed out
  o.drop_last_batch = true;  // every batch of 4 (7 per epoch), so every spare fits every batch
  Result<LoaderPtr> held = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  ASSERT_TRUE(held.ok()) << held.status().message();
  const std::vector<Batch> reference = Drain(**held);  // all kept: no buffer reused
  ASSERT_EQ(reference.size(), 14u);
  const size_t floats = reference[0].data.size();

  // The test moves batch i's data into a buffer of capacity floats + 1 + i before dropping it (a
  // new pooled buffer has capacity == size), so a later batch's capacity names the batch whose
  // buffer it was lent: lender[i], or -1 for a new buffer. Batch 0 is kept to the end, across the
  // builds into lent buffers; batch i >= 1 is dropped before batch i+1 is asked for.
  Result<LoaderPtr> loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  ASSERT_TRUE(loader.ok());
  std::vector<int64_t> lender;
  std::optional<Batch> kept, last;  // batch 0; batch lender.size() - 1
  while (true) {
    if (last) {
      EXPECT_EQ(last->data, reference[lender.size() - 1].data) << "changed while held";
      last.reset();
    }
    Result<std::optional<Batch>> b = (*loader)->Next();
    ASSERT_TRUE(b.ok()) << b.status().message();
    if (!b->has_value()) break;
    const size_t i = lender.size();
    ASSERT_LT(i, reference.size());
    std::vector<float>& data = (**b).data;
    ASSERT_EQ(data.size(), floats);
    lender.push_back(data.capacity() == floats ? -1 : int64_t(data.capacity() - floats - 1));
    EXPECT_EQ((**b).samples, reference[i].samples) << i;
    EXPECT_EQ(data, reference[i].data) << "batch " << i << " (lent batch " << lender[i] << "'s)";
    data.reserve(floats + 1 + i);  // a new buffer, which goes to the pool when the batch is dropped
    ASSERT_EQ(data.capacity(), floats + 1 + i);
    (i == 0 ? kept : last) = std::move(**b);
  }
  ASSERT_EQ(lender.size(), reference.size());
  EXPECT_EQ(kept->data, reference[0].data) << "batch 0 changed while held";

  std::set<int64_t> lent;
  for (size_t i = 0; i < lender.size(); ++i) {
    if (lender[i] < 0) continue;
    // Only a dropped batch lends its buffer, to one batch; with one spare, the next take after a
    // drop uses it, so a lent buffer is one of the last two dropped (batch i-2 is dropped before
    // batch i-1 is asked for, and batch i's take comes after that).
    EXPECT_NE(lender[i], 0) << "batch " << i << " got the buffer of batch 0, which is still held";
    EXPECT_TRUE(lender[i] == int64_t(i) - 1 || lender[i] == int64_t(i) - 2)
        << "batch " << i << " got batch " << lender[i] << "'s buffer";
    EXPECT_TRUE(lent.insert(lender[i]).second) << "batch " << lender[i] << "'s buffer lent twice";
  }
  // Reuse whatever the timing: once batch i-2 (>= 1) is dropped the pool holds a spare, and only
  // batch i-1's take may come between that drop and batch i's take, so one of the two gets it.
  for (size_t i = 3; i < lender.size(); ++i) {
    EXPECT_TRUE(lender[i - 1] >= 0 || lender[i] >= 0)
        << "batches " << i - 1 << " and " << i << " both got new buffers";
  }

  // A batch may outlive its loader (its buffer then goes to the pool the batch shares).
  loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  ASSERT_TRUE(loader.ok());
  std::optional<Batch> first = std::move((*loader)->Next().value());
  ASSERT_TRUE(first.has_value());
  loader->reset();
  EXPECT_EQ(first->data, reference[0].data);
  first.reset();
}

TEST(FloatBufferPool, ReusesUpToMaxSpareBuffers) {
  FloatBufferPool pool(2);
  std::vector<float> a = pool.Take(100), b = pool.Take(100), c = pool.Take(100);
  EXPECT_EQ(a.size(), 100u);
  const float* pa = a.data();
  const float* pb = b.data();
  pool.Give(std::move(a));
  pool.Give(std::move(b));
  pool.Give(std::move(c));  // a third spare is freed
  EXPECT_EQ(pool.spare(), 2u);
  std::vector<float> d = pool.Take(60);  // a spare that is large enough, shrunk
  EXPECT_EQ(d.size(), 60u);
  EXPECT_TRUE(d.data() == pa || d.data() == pb);
  EXPECT_EQ(pool.spare(), 1u);
  std::vector<float> e = pool.Take(1000);  // none large enough: a new one, the spare stays
  EXPECT_EQ(e.size(), 1000u);
  EXPECT_EQ(pool.spare(), 1u);
  pool.Give(std::vector<float>());  // empty buffers are not kept
  EXPECT_EQ(pool.spare(), 1u);
}

TEST_F(LoaderTest, OutputDependsOnTheDataNotOnThreadsAndChangesPerEpoch) {
  auto run = [&](int threads, Order order) {
    LoaderOptions o = Options(1, 0);
    o.threads = threads;
    o.batches_in_flight = threads == 1 ? 1 : 5;
    o.sampler.order = order;
    Result<LoaderPtr> loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
    return Drain(**loader);
  };
  for (Order order : {Order::kGlobalShuffle, Order::kShardWindows}) {
    std::vector<Batch> one = run(1, order), three = run(3, order);
    ASSERT_EQ(one.size(), three.size());
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(one[i].samples, three[i].samples);
      EXPECT_EQ(one[i].data, three[i].data);
    }
    // Epoch 1 reads the samples in another order, and augments each one differently.
    EXPECT_NE(one[0].samples, one[8].samples);
    std::map<uint64_t, std::vector<float>> first;
    for (int i = 0; i < 8; ++i) {
      for (int64_t k = 0; k < one[i].count; ++k) {
        first[one[i].samples[k]].assign(one[i].data.begin() + k * 144,
                                        one[i].data.begin() + (k + 1) * 144);
      }
    }
    int same = 0;
    for (size_t i = 8; i < one.size(); ++i) {
      for (int64_t k = 0; k < one[i].count; ++k) {
        same += std::equal(first[one[i].samples[k]].begin(), first[one[i].samples[k]].end(),
                           one[i].data.begin() + k * 144);
      }
    }
    EXPECT_LT(same, 3);
  }
}

TEST_F(LoaderTest, ResumesAtAStepAndStopsCleanlyMidEpoch) {
  LoaderOptions o = Options(1, 0);  // 30 samples, batch 4: 8 steps
  o.start_epoch = 3;
  o.start_step = 6;
  o.epochs = 1;
  Result<LoaderPtr> loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  ASSERT_TRUE(loader.ok());
  std::vector<Batch> batches = Drain(**loader);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].epoch, 3);
  EXPECT_EQ(batches[0].step, 6);
  EXPECT_EQ(batches[1].count, 2);
  EXPECT_TRUE(batches[1].last_in_epoch);
  // Endless loader, destroyed while its workers are ahead of the consumer.
  o = Options(1, 0);
  o.epochs = 0;
  loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  ASSERT_TRUE(loader.ok());
  ASSERT_TRUE((*loader)->Next().ok());
}

TEST_F(LoaderTest, BadOptionsNameTheField) {
  LoaderOptions o = Options(2, 0);
  o.batch_size = 16;  // 15 per rank
  o.drop_last_batch = true;
  Result<LoaderPtr> loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  ASSERT_FALSE(loader.ok());
  EXPECT_NE(loader.status().message().find("loader.batch_size"), std::string::npos);
  o = Options(2, 5);
  loader = Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), o);
  EXPECT_NE(loader.status().message().find("sampler.rank"), std::string::npos);
  Result<ShardSet> missing = OpenLocalSplit(data(), "val");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("splits here: train"), std::string::npos)
      << missing.status().message();
}

TEST_F(LoaderTest, CorruptRecordIsAnErrorNamingShardAndOffset) {
  // Flip one byte in the middle of record 5 of shard 1 (its CRC no longer matches).
  const std::string shard = data() + "/" + ShardFileName("train", 1, 3);
  uint64_t offset = 0;
  {
    Result<ShardReaderPtr> reader = ShardReader::Open(shard);
    ASSERT_TRUE(reader.ok());
    offset = (*reader)->record_offset(5);
    std::vector<uint8_t> bytes = testdata::ReadBytes(shard);
    bytes[offset + 40] ^= 0xff;
    testdata::WriteBytes(shard, bytes);
  }
  Result<LoaderPtr> loader =
      Loader::Open(std::move(OpenLocalSplit(data(), "train").value()), Options(1, 0));
  ASSERT_TRUE(loader.ok());
  Status error;
  int good = 0;
  while (true) {
    Result<std::optional<Batch>> b = (*loader)->Next();
    if (!b.ok()) {
      error = b.status();
      break;
    }
    ASSERT_TRUE(b->has_value()) << "the corrupt record was never reported";
    ++good;
  }
  EXPECT_LT(good, 8);
  EXPECT_NE(error.message().find("train-00001-of-00003.shard: at byte " + std::to_string(offset)),
            std::string::npos)
      << error.message();
  EXPECT_NE(error.message().find("CRC mismatch"), std::string::npos);
  // Sticky: the loader does not carry on past it.
  EXPECT_EQ((*loader)->Next().status().message(), error.message());
}

TEST_F(LoaderTest, TruncatedShardFailsToOpen) {
  const std::string shard = data() + "/" + ShardFileName("train", 2, 3);
  std::vector<uint8_t> bytes = testdata::ReadBytes(shard);
  bytes.resize(bytes.size() - 100);
  testdata::WriteBytes(shard, bytes);
  Result<ShardSet> set = OpenLocalSplit(data(), "train");
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("train-00002-of-00003.shard"), std::string::npos);
}

std::vector<Batch> LoadAll(Result<ShardSet> set, const LoaderOptions& o) {
  EXPECT_TRUE(set.ok()) << set.status().message();
  if (!set.ok()) return {};
  Result<LoaderPtr> loader = Loader::Open(std::move(set).value(), o);
  EXPECT_TRUE(loader.ok()) << loader.status().message();
  std::vector<Batch> out;
  while (loader.ok()) {
    Result<std::optional<Batch>> b = (*loader)->Next();
    EXPECT_TRUE(b.ok()) << b.status().message();
    if (!b.ok() || !b->has_value()) break;
    out.push_back(std::move(**b));
  }
  return out;
}

void ExpectSameBatches(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].samples, b[i].samples);
    EXPECT_EQ(a[i].labels, b[i].labels);
    EXPECT_EQ(a[i].data, b[i].data);
  }
}

TEST_F(LoaderTest, ObjectStoreThroughLocalDirStoreGivesTheSameBatches) {
  // Under a prefix, next to another split's directory that must be ignored.
  TempDir root;
  fs::create_directories(root.path() + "/sets/a");
  for (const auto& e : fs::directory_iterator(data())) {
    fs::copy_file(e.path(), root.path() + "/sets/a/" + e.path().filename().string());
  }
  std::shared_ptr<ObjectStore> store = std::move(LocalDirStore::Open(root.path()).value());
  LoaderOptions o = Options(2, 1);
  o.sampler.order = Order::kShardWindows;
  o.sampler.window = 5;
  const std::vector<Batch> local = LoadAll(OpenLocalSplit(data(), "train"), o);
  ExpectSameBatches(LoadAll(OpenStoreSplit(store, "sets/a/", "train"), o), local);
  // oss://bucket/sets/a parses to prefix "sets/a": the same directory.
  ExpectSameBatches(LoadAll(OpenStoreSplit(store, "sets/a", "train"), o), local);
  EXPECT_EQ(OpenStoreSplit(store, "sets/", "train").status().code(), StatusCode::kNotFound);
}

TEST_F(LoaderTest, ObjectStoreFromS3rverGivesTheSameBatches) {
  storage::testing::S3rverProcess server;
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  Result<std::unique_ptr<S3Store>> s3 = S3Store::Open(server.Url(), server.Config());
  ASSERT_TRUE(s3.ok()) << s3.status().message();
  std::shared_ptr<ObjectStore> store = std::move(s3).value();
  for (const auto& e : fs::directory_iterator(data())) {
    std::vector<uint8_t> bytes = testdata::ReadBytes(e.path().string());
    ASSERT_TRUE(
        store->Put("fmt/" + e.path().filename().string(), std::string(bytes.begin(), bytes.end()))
            .ok());
  }
  const LoaderOptions o = Options(2, 0);
  Result<ShardSet> remote = OpenStoreSplit(store, "fmt/", "train");
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  EXPECT_EQ(remote->classes, (std::vector<std::string>{"cat", "dog", "eel"}));
  EXPECT_EQ(remote->shards[0]->name(), "s3://dljob-test/fmt/train-00000-of-00003.shard");
  ExpectSameBatches(LoadAll(std::move(remote), o), LoadAll(OpenLocalSplit(data(), "train"), o));
}

TEST(LoaderIdx, RawSamplesBecomeNormalisedPixels) {
  TempDir dir;
  fs::create_directories(dir.path() + "/idx");
  testdata::WriteIdxPair(dir.path() + "/idx", "train", 12);
  testdata::WriteIdxPair(dir.path() + "/idx", "t10k", 4);
  ASSERT_TRUE(PackDataset(dir.path() + "/idx", dir.path() + "/data", {}).ok());
  LoaderOptions o;
  o.batch_size = 12;
  o.threads = 1;
  o.epochs = 1;
  o.sampler.shuffle = false;
  o.transform.output = {28, 28, 1, Layout::kCHW, {0.5f, 0, 0}, {0.25f, 1, 1}};
  o.transform.augment.random_crop = false;
  o.transform.augment.flip = false;
  o.transform.augment.center_fraction = 1.0;
  std::vector<Batch> batches = LoadAll(OpenLocalSplit(dir.path() + "/data", "train"), o);
  ASSERT_EQ(batches.size(), 1u);
  for (int i = 0; i < 12; ++i) {
    const Sample want = testdata::RawSample(i % 10, 28, 28, i);
    EXPECT_EQ(batches[0].labels[i], i % 10);
    for (int p = 0; p < 28 * 28; p += 97) {
      EXPECT_NEAR(batches[0].data[i * 784 + p], (want.data[p] / 255.0f - 0.5f) / 0.25f, 1e-5);
    }
  }
}

}  // namespace
}  // namespace dljob::storage::loader
