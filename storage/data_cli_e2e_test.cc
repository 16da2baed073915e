// `dljob data pack|ls|verify` as a user meets them: through the built dljob binary.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "storage/shard_reader.h"
#include "storage/testing/test_data.h"
#include "testing/command.h"

namespace dljob::testing {
namespace {
namespace fs = std::filesystem;

constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";

class DataCliTest : public ::testing::Test {
 protected:
  CommandResult Dljob(std::vector<std::string> args) {
    args.insert(args.begin(), BinDir() + "/dljob");
    return RunCommand(args, {{"XDG_STATE_HOME", state_.path()}});
  }
  // Progress lines may come first; the output ends with "error: <one line>\nhint: <one line>\n".
  static void ExpectOneLineErrorWithHint(const CommandResult& r) {
    size_t error = r.err.rfind("error: ");
    ASSERT_NE(error, std::string::npos) << r.err;
    EXPECT_TRUE(error == 0 || r.err[error - 1] == '\n') << r.err;
    size_t hint = r.err.find("\nhint: ", error);
    ASSERT_NE(hint, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n', error), hint) << "the error is one line: " << r.err;
    EXPECT_EQ(r.err.find('\n', hint + 1), r.err.size() - 1) << "the hint is one line: " << r.err;
    for (const char* bad : {"terminate called", "what():", "Aborted", "core dumped"}) {
      EXPECT_EQ(r.err.find(bad), std::string::npos) << r.err;
    }
  }
  std::string Src() { return files_.path() + "/src"; }
  std::string Out() { return files_.path() + "/out"; }
  std::string PackTestIdx() {
    fs::create_directories(Src());
    storage::testdata::WriteIdxPair(Src(), "train", 200);
    storage::testdata::WriteIdxPair(Src(), "t10k", 50);
    CommandResult r =
        Dljob({"data", "pack", "--from", Src(), "--to", Out(), "--records-per-shard", "64"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Out() + "/train-00001-of-00004.shard";
  }
  TempDir state_, files_;
};

TEST_F(DataCliTest, PackLsVerify) {
  PackTestIdx();
  CommandResult ls = Dljob({"data", "ls", Out()});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("train   4        200"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("classes: 10"), std::string::npos) << ls.out;

  CommandResult json = Dljob({"data", "ls", Out(), "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["records"], 250);
  EXPECT_EQ(j["splits"][1]["name"], "train");
  EXPECT_EQ(j["splits"][1]["shards"].size(), 4u);

  CommandResult verify = Dljob({"data", "verify", Out()});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_EQ(verify.out.rfind("OK: 250 records in 5 shards", 0), 0u) << verify.out;
  EXPECT_NE(verify.err.find("verify  250/250 records  100%"), std::string::npos) << verify.err;
}

TEST_F(DataCliTest, VerifyNamesTheCorruptRecordByShardAndOffset) {
  std::string shard = PackTestIdx();
  const uint64_t offset = (*storage::ShardReader::Open(shard))->record_offset(5);
  std::vector<uint8_t> bytes = storage::testdata::ReadBytes(shard);
  bytes[offset + 8 + 100] ^= 0x40;
  storage::testdata::WriteBytes(shard, bytes);

  CommandResult r = Dljob({"data", "verify", Out()});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineErrorWithHint(r);
  EXPECT_NE(r.err.find("error: " + shard + ": at byte " + std::to_string(offset) +
                       ": record 5: payload CRC mismatch"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("OK"), std::string::npos);
}

TEST_F(DataCliTest, CacheCopiesADatasetOnceAndTheCopyVerifies) {
  PackTestIdx();
  const std::string cache = files_.path() + "/ssd/cache";
  CommandResult first = Dljob({"data", "cache", "--from", Out(), "--to", cache});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("copied, 0 already there"), std::string::npos) << first.out;
  EXPECT_NE(first.err.find("100%"), std::string::npos) << "progress ends at 100%: " << first.err;
  CommandResult verify = Dljob({"data", "verify", cache});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;

  CommandResult again = Dljob({"data", "cache", "--from", Out(), "--to", cache});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already a complete copy"), std::string::npos) << again.out;
}

TEST_F(DataCliTest, CacheRefusesACorruptShardAndNamesIt) {
  std::string shard = PackTestIdx();
  const uint64_t offset = (*storage::ShardReader::Open(shard))->record_offset(3);
  std::vector<uint8_t> bytes = storage::testdata::ReadBytes(shard);
  bytes[offset + 8 + 10] ^= 0x01;
  storage::testdata::WriteBytes(shard, bytes);
  const std::string cache = files_.path() + "/cache";
  CommandResult r = Dljob({"data", "cache", "--from", Out(), "--to", cache});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineErrorWithHint(r);
  EXPECT_NE(r.err.find(fs::path(shard).filename().string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(cache + "/" + fs::path(shard).filename().string()))
      << "a corrupt shard never lands in the cache";
}

TEST_F(DataCliTest, CacheFromObjectStorageWithoutEndpointSaysWhatToSet) {
  CommandResult r = RunCommand(
      {BinDir() + "/dljob", "data", "cache", "--from", "oss://bucket/x", "--to",
       files_.path() + "/c"},
      {{"XDG_STATE_HOME", state_.path()}, {"OSS_ENDPOINT", ""}, {"AWS_ENDPOINT_URL", ""}});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLineErrorWithHint(r);
  EXPECT_NE(r.err.find("OSS_ENDPOINT"), std::string::npos) << r.err;
}

TEST_F(DataCliTest, TruncatedShardIsDetected) {
  std::string shard = PackTestIdx();
  fs::resize_file(shard, fs::file_size(shard) - 100);
  for (const char* cmd : {"verify", "ls"}) {
    CommandResult r = Dljob({"data", cmd, Out()});
    EXPECT_EQ(r.exit_code, 1) << cmd;
    ExpectOneLineErrorWithHint(r);
    EXPECT_NE(r.err.find(shard + ": at byte "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  }
}

TEST_F(DataCliTest, BadSourceIsOneLineWithAHint) {
  CommandResult r = Dljob({"data", "pack", "--from", "/nonexistent/mnist", "--to", Out()});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineErrorWithHint(r);
  EXPECT_NE(r.err.find("/nonexistent/mnist: no such file or directory"), std::string::npos);
  EXPECT_NE(r.err.find("--from takes"), std::string::npos);
  EXPECT_FALSE(fs::exists(Out()));

  fs::create_directories(Src());
  CommandResult empty = Dljob({"data", "pack", "--from", Src(), "--to", Out()});
  EXPECT_EQ(empty.exit_code, 1);
  ExpectOneLineErrorWithHint(empty);

  CommandResult ls = Dljob({"data", "ls", files_.path() + "/nothing"});
  EXPECT_EQ(ls.exit_code, 1);
  ExpectOneLineErrorWithHint(ls);
  EXPECT_NE(ls.err.find("hint: pack a dataset first"), std::string::npos);

  CommandResult usage = Dljob({"data", "pack", "--to", Out()});
  EXPECT_EQ(usage.exit_code, 2);
}

TEST_F(DataCliTest, PackRefusesToOverwrite) {
  PackTestIdx();
  CommandResult r = Dljob({"data", "pack", "--from", Src(), "--to", Out()});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLineErrorWithHint(r);
  EXPECT_NE(r.err.find("already holds shards"), std::string::npos) << r.err;
}

TEST_F(DataCliTest, JpegTree) {
  storage::testdata::WriteJpegTree(Src(), {"cat", "dog"}, 5);
  CommandResult pack = Dljob({"data", "pack", "--from", Src(), "--to", Out()});
  ASSERT_EQ(pack.exit_code, 0) << pack.err;
  EXPECT_NE(pack.out.find("(jpeg, 2 classes)"), std::string::npos) << pack.out;
  EXPECT_EQ(storage::testdata::ReadBytes(Out() + "/labels.txt"),
            (std::vector<uint8_t>{'c', 'a', 't', '\n', 'd', 'o', 'g', '\n'}));
  CommandResult verify = Dljob({"data", "verify", Out()});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_NE(verify.out.find("OK: 10 records in 1 shard ("), std::string::npos) << verify.out;
}

// The real dataset when installed: 60000 + 10000 records, and how fast pack and verify go.
TEST_F(DataCliTest, FashionMnist) {
  if (!fs::exists(kFashionMnist))
    GTEST_FAIL()
        << kFashionMnist
        << " not installed: run scripts/dev/setup.sh (Debian package dataset-fashion-mnist)";
  auto t0 = std::chrono::steady_clock::now();
  CommandResult pack = Dljob({"data", "pack", "--from", kFashionMnist, "--to", Out()});
  auto t1 = std::chrono::steady_clock::now();
  ASSERT_EQ(pack.exit_code, 0) << pack.err;
  EXPECT_NE(pack.out.find("train: 60000 records in 4 shards"), std::string::npos) << pack.out;
  EXPECT_NE(pack.out.find("test: 10000 records in 1 shard,"), std::string::npos) << pack.out;
  CommandResult verify = Dljob({"data", "verify", Out()});
  auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_EQ(verify.out.rfind("OK: 70000 records in 5 shards", 0), 0u) << verify.out;
  auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  std::printf("fashion-mnist: pack %.2fs (%.0f records/s), verify %.2fs (%.0f records/s)\n",
              secs(t1 - t0), 70000 / secs(t1 - t0), secs(t2 - t1), 70000 / secs(t2 - t1));
}

}  // namespace
}  // namespace dljob::testing
