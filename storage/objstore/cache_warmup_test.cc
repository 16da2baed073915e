// WarmCache from a LocalDirStore and from a real S3-compatible server (s3rver; missing, its test
// fails naming scripts/dev/setup.sh): complete, byte-identical copies; interruption and resumption;
// skipping unchanged objects; checks that keep corrupt data out of the cache.
#include "storage/objstore/cache_warmup.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "storage/objstore/local_dir_store.h"
#include "storage/objstore/s3_store.h"
#include "storage/objstore/testing/s3rver_process.h"
#include "storage/shard_writer.h"
#include "storage/testing/test_data.h"
#include "testing/command.h"

namespace dljob::storage {
namespace {

namespace fs = std::filesystem;
using dljob::testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// key (relative to the dataset root) -> bytes, for every regular file under `dir`, skipping the
// cache's own metadata.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).generic_string();
    if (!e.is_regular_file() || rel.rfind(kCacheMetaDir, 0) == 0) continue;
    out[rel] = Slurp(e.path().string());
  }
  return out;
}

// A dataset: 3 shards of 60 raw 32x32 samples (~60 KiB each), labels.txt, and a nested file.
void WriteDataset(const std::string& dir) {
  fs::create_directories(dir);
  ShardWriterOptions options;
  options.max_records_per_shard = 60;
  auto writer = ShardWriter::Create(dir, "train", options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (int i = 0; i < 180; ++i) {
    ASSERT_TRUE((*writer)->Append(testdata::RawSample(i % 10, 32, 32, i)).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  std::ofstream(dir + "/labels.txt") << "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
  fs::create_directories(dir + "/extra");
  std::ofstream(dir + "/extra/notes.bin", std::ios::binary) << std::string(100'000, 'n');
}

class WarmCacheLocalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(WriteDataset(src_.path() + "/ds"));
    store_ = std::move(LocalDirStore::Open(src_.path()).value());
    cache_ = dst_.path() + "/cache";
  }
  std::map<std::string, std::string> Source() { return Files(src_.path() + "/ds"); }

  TempDir src_, dst_;
  std::unique_ptr<LocalDirStore> store_;
  std::string cache_;
};

TEST_F(WarmCacheLocalTest, CopiesEverythingAndASecondRunIsANoOp) {
  WarmCacheOptions options;
  options.parallel = 3;
  options.chunk_bytes = 20'000;
  std::vector<WarmCacheProgress> seen;
  options.progress = [&](const WarmCacheProgress& p) { seen.push_back(p); };
  Result<WarmCacheResult> r = WarmCache(*store_, "ds", cache_, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Files(cache_), Source());
  EXPECT_EQ(r->objects, 5u);
  EXPECT_EQ(r->objects_copied, 5u);
  EXPECT_EQ(r->bytes_downloaded, r->bytes);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().bytes_done, r->bytes);
  EXPECT_EQ(seen.back().bytes_total, r->bytes);
  EXPECT_EQ(seen.back().objects_done, 5u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].bytes_done, seen[i - 1].bytes_done);
  EXPECT_TRUE(fs::exists(cache_ + "/.dljob-cache/complete"));

  seen.clear();
  Result<WarmCacheResult> again = WarmCache(*store_, "ds/", cache_, options);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_complete);
  EXPECT_EQ(again->objects, 5u);
  EXPECT_EQ(again->bytes, r->bytes);
  EXPECT_TRUE(seen.empty());

  options.trust_marker = false;
  Result<WarmCacheResult> listed = WarmCache(*store_, "ds", cache_, options);
  ASSERT_TRUE(listed.ok());
  EXPECT_FALSE(listed->already_complete);
  EXPECT_EQ(listed->objects_skipped, 5u);
  EXPECT_EQ(listed->bytes_downloaded, 0u);
}

TEST_F(WarmCacheLocalTest, InterruptedThenResumedEndsByteIdentical) {
  std::atomic<bool> cancel{false};
  WarmCacheOptions options;
  options.parallel = 1;  // one worker: the stop lands mid-object deterministically
  options.chunk_bytes = 8'000;
  options.cancel = &cancel;
  options.progress = [&](const WarmCacheProgress& p) {
    if (p.bytes_done * 2 >= p.bytes_total) cancel = true;
  };
  Result<WarmCacheResult> first = WarmCache(*store_, "ds", cache_, options);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(first.status().message(), cache_ + ": warm-up interrupted; run again to resume");
  EXPECT_FALSE(fs::exists(cache_ + "/.dljob-cache/complete"));
  // Nothing incomplete under a final name; at least one partial file waiting.
  const std::map<std::string, std::string> source = Source();
  int parts = 0;
  for (const auto& [rel, bytes] : Files(cache_)) {
    if (rel.size() > 5 && rel.substr(rel.size() - 5) == kPartSuffix) {
      ++parts;
      EXPECT_LT(bytes.size(), source.at(rel.substr(0, rel.size() - 5)).size());
    } else {
      EXPECT_EQ(bytes, source.at(rel)) << rel;
    }
  }
  EXPECT_GE(parts, 1);

  WarmCacheOptions resume;
  resume.chunk_bytes = 8'000;
  Result<WarmCacheResult> second = WarmCache(*store_, "ds", cache_, resume);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(Files(cache_), source);
  EXPECT_LT(second->bytes_downloaded, second->bytes)
      << "the second run resumed rather than starting over";
}

TEST_F(WarmCacheLocalTest, ChangedObjectsAreCopiedAgain) {
  ASSERT_TRUE(WarmCache(*store_, "ds", cache_, {}).ok());
  ASSERT_TRUE(store_->Put("ds/extra/notes.bin", "rewritten").ok());
  WarmCacheOptions options;
  options.trust_marker = false;
  Result<WarmCacheResult> r = WarmCache(*store_, "ds", cache_, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->objects_copied, 1u);
  EXPECT_EQ(r->objects_skipped, 4u);
  EXPECT_EQ(Slurp(cache_ + "/extra/notes.bin"), "rewritten");
}

TEST_F(WarmCacheLocalTest, ACorruptShardNeverReachesTheCache) {
  const std::string shard = "train-00001-of-00003.shard";
  std::string bytes = Slurp(src_.path() + "/ds/" + shard);
  bytes[100] ^= 0x40;  // inside record 0's payload
  ASSERT_TRUE(store_->Put("ds/" + shard, bytes).ok());
  Result<WarmCacheResult> r = WarmCache(*store_, "ds", cache_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      r.status().message().find(src_.path() + "/ds/" + shard + ": the copy is not a valid shard: "),
      std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("CRC"), std::string::npos) << r.status().message();
  EXPECT_FALSE(fs::exists(cache_ + "/" + shard));
  EXPECT_FALSE(fs::exists(cache_ + "/" + shard + kPartSuffix));
}

TEST_F(WarmCacheLocalTest, AStalePartialFileIsReplaced) {
  const std::string shard = "train-00000-of-00003.shard";
  fs::create_directories(cache_);
  std::ofstream(cache_ + "/" + shard + kPartSuffix, std::ios::binary) << std::string(5000, 'x');
  Result<WarmCacheResult> r = WarmCache(*store_, "ds", cache_, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Files(cache_), Source());
}

TEST(WarmCacheS3, CopiesFromAnS3ServerCheckingMd5) {
  testing::S3rverProcess server;
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  auto store = std::move(S3Store::Open(server.Url(), server.Config()).value());
  TempDir src, dst;
  ASSERT_NO_FATAL_FAILURE(WriteDataset(src.path()));
  const std::map<std::string, std::string> source = Files(src.path());
  for (const auto& [rel, bytes] : source) ASSERT_TRUE(store->Put("data/set/" + rel, bytes).ok());
  ASSERT_TRUE(store->Put("data/settle/other", "not under the prefix").ok());
  // A partial copy of a non-shard file with wrong bytes: only the MD5 check can catch it.
  const std::string cache = dst.path() + "/c";
  fs::create_directories(cache + "/extra");
  std::ofstream(cache + "/extra/notes.bin" + kPartSuffix, std::ios::binary)
      << std::string(1000, 'X');

  WarmCacheOptions options;
  options.parallel = 4;
  options.chunk_bytes = 30'000;
  Result<WarmCacheResult> r = WarmCache(*store, "data/set", cache, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Files(cache), source);
  EXPECT_EQ(r->objects, source.size());
  EXPECT_GT(r->bytes_downloaded, r->bytes) << "notes.bin was downloaded twice";
}

}  // namespace
}  // namespace dljob::storage
