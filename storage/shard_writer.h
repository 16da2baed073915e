// ShardWriter: writes the samples of one split into record shards (format: record_shard.h).
//
// Samples go into a shard until it reaches max_records_per_shard records or max_shard_bytes
// bytes, then the writer rolls over to the next. Shards are written under hidden temporary names
// (".<split>-<seq>.shard.tmp"), each flushed and fsync'd when closed; Finish() renames them all to
// "<split>-<iiiii>-of-<nnnnn>.shard" once the count is known, so a partial shard is never visible
// under a final name. Destroying a writer without a successful Finish() removes its temporaries.
//
// Errors are sticky: after one failed Append, every later call returns the same Status.
// Thread-compatible: one thread at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/record_shard.h"

namespace dljob::storage {

struct ShardWriterOptions {
  uint64_t max_records_per_shard = 16384;   // 0 = no limit
  uint64_t max_shard_bytes = 256ull << 20;  // whole file, header to footer; 0 = no limit
};

class ShardWriter {
 public:
  // REQUIRES: `dir` exists. kInvalidArgument for a bad split name (ValidateSplitName),
  // kAlreadyExists if `dir` already holds shards of this split.
  static Result<std::unique_ptr<ShardWriter>> Create(const std::string& dir,
                                                     const std::string& split,
                                                     ShardWriterOptions options = {});
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  Status Append(const Sample& sample);

  // Closes the last shard and gives every shard its final name; returns the final paths in
  // order. A split with no samples gets one empty shard. REQUIRES: called once.
  Result<std::vector<std::string>> Finish();

  uint64_t records() const { return total_records_; }
  uint64_t bytes() const { return total_bytes_; }  // of closed and open shards so far

 private:
  ShardWriter(std::string dir, std::string split, ShardWriterOptions options);
  Status OpenNext();
  Status CloseCurrent();
  Status Write(const void* data, size_t n);
  bool ShouldRoll(size_t record_bytes) const;
  void RemoveTemporaries();

  std::string dir_, split_;
  ShardWriterOptions options_;
  std::FILE* file_ = nullptr;  // the open shard, or null between shards
  std::vector<std::string> temp_paths_;
  std::vector<uint8_t> index_;    // index entries of the open shard
  std::vector<uint8_t> payload_;  // reused encoding buffer
  uint64_t shard_offset_ = 0;     // bytes written to the open shard
  uint64_t shard_records_ = 0;
  uint64_t total_records_ = 0, total_bytes_ = 0;
  Status status_;
  bool finished_ = false;
};

}  // namespace dljob::storage
