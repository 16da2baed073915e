// Robustness of ShardReader on hostile bytes, as a deterministic gtest loop in the spirit of a
// libFuzzer target: random files, and a valid shard with bytes flipped, overwritten, truncated or
// extended. The reader must never crash, hang or return a record that fails its checks; and
// because every byte of a shard is covered by a CRC, a magic, or a structural check, any single
// changed byte must be reported.
#include <unistd.h>

#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "storage/random_access_file.h"
#include "storage/shard_reader.h"
#include "storage/shard_writer.h"
#include "storage/testing/test_data.h"

namespace dljob::storage {
namespace {

// Reads a shard from memory the way training would; returns whether everything checked out.
bool ReadsClean(const std::vector<uint8_t>& bytes) {
  auto reader = ShardReader::Open(std::make_unique<MemoryFile>("fuzz.shard", bytes));
  if (!reader.ok()) return false;
  for (uint64_t i = 0; i < (*reader)->num_records() && i < 4; ++i) (void)(*reader)->Read(i);
  return (*reader)->ForEach([](uint64_t, const Sample&) { return Status::Ok(); }).ok();
}

std::vector<uint8_t> ValidShard() {
  std::string dir = ::testing::TempDir() + "/shard_fuzz_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto writer = ShardWriter::Create(dir, "fuzz", {});
  for (int i = 0; i < 12; ++i) {
    Sample s = testdata::RawSample(i, 4, 5, i);
    if (i % 4 == 3) s = {uint32_t(i), SampleFormat::kJpeg, 1, 6, 7, {0xFF, 0xD8, 1, 2, 3}};
    EXPECT_TRUE((*writer)->Append(s).ok());
  }
  std::vector<uint8_t> bytes = testdata::ReadBytes((*(*writer)->Finish())[0]);
  std::filesystem::remove_all(dir);
  return bytes;
}

TEST(ShardFuzzTest, ValidShardReadsClean) { EXPECT_TRUE(ReadsClean(ValidShard())); }

TEST(ShardFuzzTest, EverySingleByteChangeIsDetected) {
  const std::vector<uint8_t> valid = ValidShard();
  for (size_t at = 0; at < valid.size(); ++at) {
    for (uint8_t flip : {0x01, 0x80, 0xFF}) {
      std::vector<uint8_t> bytes = valid;
      bytes[at] ^= flip;
      ASSERT_FALSE(ReadsClean(bytes)) << "byte " << at << " ^ " << int(flip) << " went unnoticed";
    }
  }
}

TEST(ShardFuzzTest, EveryTruncationAndExtensionIsDetected) {
  const std::vector<uint8_t> valid = ValidShard();
  for (size_t keep = 0; keep < valid.size(); ++keep) {
    ASSERT_FALSE(ReadsClean({valid.begin(), valid.begin() + keep})) << "kept " << keep;
  }
  std::vector<uint8_t> longer = valid;
  longer.push_back(0);
  EXPECT_FALSE(ReadsClean(longer));
}

TEST(ShardFuzzTest, RandomAndMutatedInputsNeverCrash) {
  const std::vector<uint8_t> valid = ValidShard();
  std::mt19937_64 rng(20261122);
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes;
    if (iter % 4 == 0) {
      bytes.resize(rng() % 256);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    } else {
      bytes = valid;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits; ++e) {
        const size_t at = rng() % bytes.size();
        switch (rng() % 4) {
          case 0:
            bytes[at] = static_cast<uint8_t>(rng());
            break;
          case 1:
            bytes[at] = 0xFF;
            break;
          case 2:
            bytes.resize(std::max<size_t>(at, 1));
            break;
          default:
            bytes.insert(bytes.begin() + at, static_cast<uint8_t>(rng()));
            break;
        }
      }
    }
    (void)ReadsClean(bytes);  // must return, whatever it says
  }
}

}  // namespace
}  // namespace dljob::storage
