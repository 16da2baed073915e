// ShardWriter and ShardReader: round trips, rolling, atomic finish, and corruption detection.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "storage/crc32c.h"
#include "storage/dataset.h"
#include "storage/shard_reader.h"
#include "storage/shard_writer.h"
#include "storage/testing/test_data.h"

namespace dljob::storage {
namespace {
namespace fs = std::filesystem;
using testdata::RawSample;

class ShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("shard_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<Sample> MakeSamples(int n) {
    std::vector<Sample> samples;
    for (int i = 0; i < n; ++i) {
      if (i % 3 == 2) {
        samples.push_back(
            {uint32_t(i % 5), SampleFormat::kJpeg, 3, 12, 16, testdata::MakeJpeg(16, 12, 3, i)});
      } else {
        samples.push_back(RawSample(i % 5, 28, 28, i));
      }
    }
    return samples;
  }

  std::vector<std::string> Pack(const std::vector<Sample>& samples, ShardWriterOptions options,
                                const std::string& split = "train") {
    auto writer = ShardWriter::Create(dir_, split, options);
    EXPECT_TRUE(writer.ok()) << writer.status().message();
    for (const Sample& s : samples) EXPECT_TRUE((*writer)->Append(s).ok());
    auto paths = (*writer)->Finish();
    EXPECT_TRUE(paths.ok()) << paths.status().message();
    return paths.ok() ? *paths : std::vector<std::string>{};
  }

  std::string dir_;
};

TEST_F(ShardTest, RoundTripRandomAccessAndIteration) {
  std::vector<Sample> samples = MakeSamples(50);
  std::vector<std::string> paths = Pack(samples, {});
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(fs::path(paths[0]).filename(), "train-00000-of-00001.shard");
  auto reader = ShardReader::Open(paths[0]);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ASSERT_EQ((*reader)->num_records(), 50u);
  for (uint64_t i : {49, 0, 17, 3}) {
    auto s = (*reader)->Read(i);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(*s, samples[i]) << "record " << i;
  }
  uint64_t seen = 0;
  Status st = (*reader)->ForEach([&](uint64_t i, const Sample& s) {
    EXPECT_EQ(i, seen++);
    EXPECT_EQ(s, samples[i]);
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(seen, 50u);
  EXPECT_FALSE((*reader)->Read(50).ok());
}

TEST_F(ShardTest, RollsAtTheRecordLimit) {
  std::vector<std::string> paths = Pack(MakeSamples(10), {.max_records_per_shard = 4});
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(fs::path(paths[2]).filename(), "train-00002-of-00003.shard");
  std::vector<uint64_t> counts;
  for (const auto& p : paths) counts.push_back((*ShardReader::Open(p))->num_records());
  EXPECT_EQ(counts, (std::vector<uint64_t>{4, 4, 2}));
}

TEST_F(ShardTest, RollsAtTheSizeLimitAndNeverExceedsIt) {
  std::vector<Sample> samples;
  for (int i = 0; i < 40; ++i) samples.push_back(RawSample(0, 28, 28, i));  // 812 bytes each
  const uint64_t limit = 4096;
  std::vector<std::string> paths =
      Pack(samples, {.max_records_per_shard = 0, .max_shard_bytes = limit});
  ASSERT_GT(paths.size(), 5u);
  uint64_t total = 0;
  for (const auto& p : paths) {
    EXPECT_LE(fs::file_size(p), limit) << p;
    total += (*ShardReader::Open(p))->num_records();
  }
  EXPECT_EQ(total, 40u);
}

TEST_F(ShardTest, EmptySplitGetsOneEmptyShard) {
  std::vector<std::string> paths = Pack({}, {});
  ASSERT_EQ(paths.size(), 1u);
  auto reader = ShardReader::Open(paths[0]);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->num_records(), 0u);
}

TEST_F(ShardTest, NothingVisibleUnderFinalNamesUntilFinish) {
  {
    auto writer = ShardWriter::Create(dir_, "train", {.max_records_per_shard = 2});
    ASSERT_TRUE(writer.ok());
    for (const Sample& s : MakeSamples(5)) ASSERT_TRUE((*writer)->Append(s).ok());
    for (const auto& e : fs::directory_iterator(dir_)) {
      EXPECT_FALSE(ParseShardFileName(e.path().filename().string())) << e.path();
    }
  }  // abandoned without Finish: temporaries go away
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ShardTest, RefusesToMixWithAnExistingSplit) {
  Pack(MakeSamples(3), {});
  auto again = ShardWriter::Create(dir_, "train", {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(ShardWriter::Create(dir_, "test", {}).ok());
  EXPECT_FALSE(ShardWriter::Create(dir_, "bad-name", {}).ok());
}

TEST_F(ShardTest, CorruptPayloadByteNamesShardAndOffset) {
  std::string path = Pack(MakeSamples(20), {})[0];
  auto clean = ShardReader::Open(path);
  const uint64_t offset = (*clean)->record_offset(7);
  std::vector<uint8_t> bytes = testdata::ReadBytes(path);
  bytes[offset + kRecordHeaderBytes + 30] ^= 0x01;
  testdata::WriteBytes(path, bytes);

  auto reader = ShardReader::Open(path);  // structure is intact: opens
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_TRUE((*reader)->Read(6).ok());
  auto bad = (*reader)->Read(7);
  ASSERT_FALSE(bad.ok());
  const std::string msg = bad.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("at byte " + std::to_string(offset) + ": record 7: payload CRC mismatch"),
            std::string::npos)
      << msg;
  uint64_t delivered = 0;
  Status st = (*reader)->ForEach([&](uint64_t, const Sample&) {
    ++delivered;
    return Status::Ok();
  });
  EXPECT_EQ(st.message(), msg);
  EXPECT_EQ(delivered, 7u);  // records 0..6, never the bad one
}

TEST_F(ShardTest, TruncatedShardIsDetectedAtOpen) {
  std::string path = Pack(MakeSamples(20), {})[0];
  std::vector<uint8_t> bytes = testdata::ReadBytes(path);
  for (size_t keep : {size_t{0}, size_t{10}, size_t{47}, bytes.size() / 2, bytes.size() - 1}) {
    testdata::WriteBytes(path, {bytes.begin(), bytes.begin() + keep});
    auto reader = ShardReader::Open(path);
    ASSERT_FALSE(reader.ok()) << "kept " << keep;
    EXPECT_NE(reader.status().message().find(path), std::string::npos);
    EXPECT_NE(reader.status().message().find("truncated"), std::string::npos)
        << reader.status().message();
  }
}

TEST_F(ShardTest, RejectsOtherFilesAndNewerVersions) {
  testdata::WriteBytes(dir_ + "/x", std::vector<uint8_t>(100, 'x'));
  auto other = ShardReader::Open(dir_ + "/x");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("not a dljob record shard"), std::string::npos);

  std::string path = Pack(MakeSamples(2), {})[0];
  std::vector<uint8_t> bytes = testdata::ReadBytes(path);
  bytes[8] = 2;  // version 2, header CRC recomputed so only the version is wrong
  std::vector<uint8_t> head(bytes.begin(), bytes.begin() + 12);
  uint32_t crc = Crc32c(head);
  for (int i = 0; i < 4; ++i) bytes[12 + i] = static_cast<uint8_t>(crc >> (8 * i));
  testdata::WriteBytes(path, bytes);
  auto newer = ShardReader::Open(path);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("unsupported shard format version 2"), std::string::npos)
      << newer.status().message();
}

TEST_F(ShardTest, MissingFileIsNotFound) {
  auto r = ShardReader::Open(dir_ + "/none.shard");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace dljob::storage
