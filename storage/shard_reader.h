// ShardReader: opens one record shard (format: record_shard.h), checks its structure, and reads
// records by number or in order, checking each record's CRC.
//
// Open() reads the header, footer and index and validates them (magics, version, checksums,
// record offsets contiguous from byte 16 to the index) before any record is returned; a shard
// cut short or never finished fails here. Every read then checks the record's length against the
// index and its payload CRC. Failures are kInvalidArgument messages that name the shard and the
// byte offset, e.g. "data/train-00001-of-00004.shard: at byte 13920: record 17: payload CRC
// mismatch (stored 0x1a2b3c4d, computed 0x5e6f7a8b)". Nothing is ever returned unchecked.
//
// Thread-safety: after Open, Read/ReadPayload/ForEach are const and safe to call from many
// threads at once (the file does positioned reads). The reader owns its file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/random_access_file.h"
#include "storage/record_shard.h"

namespace dljob::storage {

class ShardReader;
using ShardReaderPtr = std::unique_ptr<ShardReader>;

class ShardReader {
 public:
  static Result<ShardReaderPtr> Open(RandomAccessFilePtr file);
  static Result<ShardReaderPtr> Open(const std::string& path);

  const std::string& name() const { return file_->name(); }
  uint64_t num_records() const { return offsets_.size(); }
  uint64_t file_size() const { return file_->size(); }
  // The underlying file, for callers that read several records at once (then Decode each).
  const RandomAccessFile& file() const { return *file_; }
  // Byte offset of record i's length field. REQUIRES: i < num_records().
  uint64_t record_offset(uint64_t i) const { return offsets_[i]; }
  // Bytes record i occupies from record_offset(i): its 8-byte header and its payload.
  // REQUIRES: i < num_records().
  uint64_t record_size(uint64_t i) const { return kRecordHeaderBytes + lengths_[i]; }

  // The CRC-checked payload, or the decoded sample, of record i. i out of range is
  // kInvalidArgument.
  Result<std::vector<uint8_t>> ReadPayload(uint64_t i) const;
  Result<Sample> Read(uint64_t i) const;

  // Calls fn(i, sample) for every record in order, reading several MiB at a time. Stops at the
  // first failed check or the first non-OK status fn returns, and returns it.
  // Checks and decodes record i from `record`, its record_size(i) bytes that the caller read
  // itself (the loader reads neighbouring records in one go). Same checks and messages as Read;
  // a span of the wrong size is kInvalidArgument. REQUIRES: i < num_records().
  Result<Sample> Decode(uint64_t i, std::span<const uint8_t> record) const;

  Status ForEach(const std::function<Status(uint64_t, const Sample&)>& fn) const;

 private:
  explicit ShardReader(RandomAccessFilePtr file) : file_(std::move(file)) {}
  Status Load();
  Status LoadIndex(uint64_t index_offset, uint64_t count, uint32_t index_crc);
  Status Corrupt(uint64_t offset, const std::string& what) const;
  // Checks one record whose 8-byte header and payload lie at `bytes` (read from offsets_[i]).
  Status CheckRecord(uint64_t i, const uint8_t* bytes) const;
  Result<Sample> DecodeAt(uint64_t i, const uint8_t* payload) const;

  RandomAccessFilePtr file_;
  std::vector<uint64_t> offsets_;
  std::vector<uint32_t> lengths_;
};

}  // namespace dljob::storage
