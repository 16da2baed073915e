// Record shards: the on-disk format dljob packs datasets into (`dljob data pack`), and the sample
// encoding inside each record. ShardWriter (shard_writer.h) writes it, ShardReader
// (shard_reader.h) reads and checks it.
//
// Why: reading many small files from NAS or object storage starves GPUs. A shard holds thousands
// of samples in one file, read sequentially or at random through its index, and every record
// carries a checksum so a corrupted or truncated shard is reported, never fed to training.
//
// FORMAT, version 1. All integers little-endian; CRC is CRC-32C (storage/crc32c.h).
//
//   offset  size  field
//   ------  ----  ---------------------------------------------------------------------
//   File header (16 bytes)
//   0       8     magic "DLJSHARD"
//   8       4     u32 format version (1)
//   12      4     u32 CRC of bytes 0..11
//   Records, back to back from byte 16; record i:
//   +0      4     u32 payload length L (at most kMaxPayloadBytes)
//   +4      4     u32 CRC of the payload
//   +8      L     payload: one encoded sample (below)
//   Index at index_offset (right after the last record): one 12-byte entry per record
//   +0      8     u64 offset of record i (of its length field)
//   +8      4     u32 payload length of record i (must equal the record's own length field)
//   Footer (the last 32 bytes of the file)
//   +0      8     u64 index_offset
//   +8      8     u64 record count N
//   +16     4     u32 CRC of the N*12 index bytes
//   +20     4     u32 CRC of footer bytes +0..+19
//   +24     8     magic "DLJSHEND"
//
// So file size = index_offset + 12*N + 32; record 0 starts at byte 16 and each record starts where
// the previous one ends (offset + 8 + L); the last ends at index_offset. A reader checks all of
// this when it opens a shard (a missing end magic means "truncated or never finished") and checks
// the payload CRC on every record it reads.
//
// Sample payload (12-byte sample header, then the image bytes):
//   +0   4  u32 label (index into the dataset's labels.txt)
//   +4   1  u8  format: 1 = raw pixels (uint8, height x width x channels, row-major, HWC),
//                       2 = a JPEG file's bytes as-is
//   +5   1  u8  channels (1 = grey, 3 = RGB)
//   +6   2  u16 height
//   +8   2  u16 width
//   +10  2  u16 reserved, 0
//   +12  .. image bytes (raw: exactly height*width*channels of them)
//
// A dataset directory (storage/dataset.h) holds <split>-<iiiii>-of-<nnnnn>.shard files and
// labels.txt (class names, one per line, line k = label k). Pure definitions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace dljob::storage {

inline constexpr char kShardMagic[8] = {'D', 'L', 'J', 'S', 'H', 'A', 'R', 'D'};
inline constexpr char kShardEndMagic[8] = {'D', 'L', 'J', 'S', 'H', 'E', 'N', 'D'};
inline constexpr uint32_t kShardFormatVersion = 1;
inline constexpr uint64_t kShardHeaderBytes = 16;
inline constexpr uint64_t kRecordHeaderBytes = 8;
inline constexpr uint64_t kIndexEntryBytes = 12;
inline constexpr uint64_t kShardFooterBytes = 32;
inline constexpr uint64_t kSampleHeaderBytes = 12;
inline constexpr uint32_t kMaxPayloadBytes = 1u << 30;

enum class SampleFormat : uint8_t { kRaw = 1, kJpeg = 2 };

// "raw", "jpeg", or "format N" for an unknown value.
std::string SampleFormatName(SampleFormat format);

struct Sample {
  uint32_t label = 0;
  SampleFormat format = SampleFormat::kRaw;
  uint8_t channels = 1;
  uint16_t height = 0;
  uint16_t width = 0;
  std::vector<uint8_t> data;  // raw pixels or JPEG bytes

  bool operator==(const Sample&) const = default;
};

// Appends the sample's payload encoding to `out`.
void EncodeSample(const Sample& sample, std::vector<uint8_t>& out);

// Decodes a payload; malformed payloads (short, unknown format, raw size mismatch, reserved bits
// set) are kInvalidArgument. The message does not say where: the caller prefixes that.
Result<Sample> DecodeSample(std::span<const uint8_t> payload);

// Little-endian field access, shared by writer and reader.
inline void PutU16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
inline void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline uint16_t GetU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t GetU32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
inline uint64_t GetU64(const uint8_t* p) {
  return uint64_t{GetU32(p)} | (uint64_t{GetU32(p + 4)} << 32);
}

}  // namespace dljob::storage
