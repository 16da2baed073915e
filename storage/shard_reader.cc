#include "storage/shard_reader.h"

#include <cstdio>
#include <cstring>

#include "storage/crc32c.h"

namespace dljob::storage {
namespace {

constexpr uint64_t kChunkBytes = 4u << 20;

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

Result<ShardReaderPtr> ShardReader::Open(RandomAccessFilePtr file) {
  ShardReaderPtr reader(new ShardReader(std::move(file)));
  if (Status s = reader->Load(); !s.ok()) return s;
  return reader;
}

Result<ShardReaderPtr> ShardReader::Open(const std::string& path) {
  Result<RandomAccessFilePtr> file = OpenLocalFile(path);
  if (!file.ok()) return file.status();
  return Open(std::move(file).value());
}

Status ShardReader::Corrupt(uint64_t offset, const std::string& what) const {
  return Status::InvalidArgument(name() + ": at byte " + std::to_string(offset) + ": " + what);
}

Status ShardReader::Load() {
  const uint64_t size = file_->size();
  if (size < kShardHeaderBytes + kShardFooterBytes) {
    return Corrupt(size, "truncated: " + std::to_string(size) +
                             " bytes is too short for a shard (at least " +
                             std::to_string(kShardHeaderBytes + kShardFooterBytes) + ")");
  }
  uint8_t header[kShardHeaderBytes];
  if (Status s = file_->ReadAt(0, header); !s.ok()) return s;
  if (std::memcmp(header, kShardMagic, 8) != 0) return Corrupt(0, "not a dljob record shard");
  if (GetU32(header + 12) != Crc32c({header, 12})) return Corrupt(12, "header CRC mismatch");
  if (uint32_t v = GetU32(header + 8); v != kShardFormatVersion) {
    return Corrupt(8, "unsupported shard format version " + std::to_string(v) +
                          " (this dljob reads " + std::to_string(kShardFormatVersion) + ")");
  }
  const uint64_t at = size - kShardFooterBytes;
  uint8_t footer[kShardFooterBytes];
  if (Status s = file_->ReadAt(at, footer); !s.ok()) return s;
  if (std::memcmp(footer + 24, kShardEndMagic, 8) != 0) {
    return Corrupt(at + 24, "no footer: the shard is truncated or was never finished");
  }
  if (GetU32(footer + 20) != Crc32c({footer, 20})) return Corrupt(at + 20, "footer CRC mismatch");
  const uint64_t index_offset = GetU64(footer);
  const uint64_t count = GetU64(footer + 8);
  if (index_offset < kShardHeaderBytes || index_offset > at ||
      (at - index_offset) / kIndexEntryBytes != count ||
      (at - index_offset) % kIndexEntryBytes != 0) {
    return Corrupt(at, "footer says " + std::to_string(count) + " records indexed at byte " +
                           std::to_string(index_offset) + ", which does not fit a " +
                           std::to_string(size) + "-byte file (truncated?)");
  }
  return LoadIndex(index_offset, count, GetU32(footer + 16));
}

Status ShardReader::LoadIndex(uint64_t index_offset, uint64_t count, uint32_t index_crc) {
  std::vector<uint8_t> index(count * kIndexEntryBytes);
  if (Status s = file_->ReadAt(index_offset, index); !s.ok()) return s;
  if (Crc32c(index) != index_crc) return Corrupt(index_offset, "index CRC mismatch");
  offsets_.resize(count);
  lengths_.resize(count);
  uint64_t expect = kShardHeaderBytes;
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* e = &index[i * kIndexEntryBytes];
    offsets_[i] = GetU64(e);
    lengths_[i] = GetU32(e + 8);
    if (offsets_[i] != expect || lengths_[i] > kMaxPayloadBytes ||
        lengths_[i] + kRecordHeaderBytes > index_offset - expect) {
      return Corrupt(index_offset + i * kIndexEntryBytes,
                     "index entry " + std::to_string(i) + " (offset " +
                         std::to_string(offsets_[i]) + ", length " + std::to_string(lengths_[i]) +
                         ") does not follow record " + std::to_string(i) + " at byte " +
                         std::to_string(expect));
    }
    expect += kRecordHeaderBytes + lengths_[i];
  }
  if (expect != index_offset) {
    return Corrupt(expect, "records end at byte " + std::to_string(expect) +
                               " but the index starts at byte " + std::to_string(index_offset));
  }
  return Status::Ok();
}

Status ShardReader::CheckRecord(uint64_t i, const uint8_t* bytes) const {
  const std::string where = "record " + std::to_string(i);
  if (GetU32(bytes) != lengths_[i]) {
    return Corrupt(offsets_[i], where + ": length " + std::to_string(GetU32(bytes)) +
                                    " disagrees with the index (" + std::to_string(lengths_[i]) +
                                    ")");
  }
  const uint32_t stored = GetU32(bytes + 4);
  const uint32_t computed = Crc32c({bytes + kRecordHeaderBytes, lengths_[i]});
  if (stored != computed) {
    return Corrupt(offsets_[i], where + ": payload CRC mismatch (stored " + Hex(stored) +
                                    ", computed " + Hex(computed) + ")");
  }
  return Status::Ok();
}

Result<Sample> ShardReader::DecodeAt(uint64_t i, const uint8_t* payload) const {
  Result<Sample> sample = DecodeSample({payload, lengths_[i]});
  if (!sample.ok()) {
    return Corrupt(offsets_[i], "record " + std::to_string(i) + ": " + sample.status().message());
  }
  return sample;
}

Result<std::vector<uint8_t>> ShardReader::ReadPayload(uint64_t i) const {
  if (i >= num_records()) {
    return Status::InvalidArgument(name() + ": no record " + std::to_string(i) + " (shard has " +
                                   std::to_string(num_records()) + ")");
  }
  std::vector<uint8_t> bytes(kRecordHeaderBytes + lengths_[i]);
  if (Status s = file_->ReadAt(offsets_[i], bytes); !s.ok()) return s;
  if (Status s = CheckRecord(i, bytes.data()); !s.ok()) return s;
  bytes.erase(bytes.begin(), bytes.begin() + kRecordHeaderBytes);
  return bytes;
}

Result<Sample> ShardReader::Read(uint64_t i) const {
  Result<std::vector<uint8_t>> payload = ReadPayload(i);
  if (!payload.ok()) return payload.status();
  return DecodeAt(i, payload->data());
}

Result<Sample> ShardReader::Decode(uint64_t i, std::span<const uint8_t> record) const {
  if (record.size() != record_size(i)) {
    return Corrupt(offsets_[i], "record " + std::to_string(i) + ": got " +
                                    std::to_string(record.size()) + " bytes, the index says " +
                                    std::to_string(record_size(i)));
  }
  if (Status s = CheckRecord(i, record.data()); !s.ok()) return s;
  return DecodeAt(i, record.data() + kRecordHeaderBytes);
}

Status ShardReader::ForEach(const std::function<Status(uint64_t, const Sample&)>& fn) const {
  std::vector<uint8_t> chunk;
  uint64_t i = 0;
  while (i < num_records()) {
    // Records [i, end) read in one go: up to kChunkBytes, or one record if it is bigger.
    uint64_t end = i + 1;
    const uint64_t start = offsets_[i];
    auto end_of = [&](uint64_t r) { return offsets_[r] + kRecordHeaderBytes + lengths_[r]; };
    while (end < num_records() && end_of(end) - start <= kChunkBytes) ++end;
    chunk.resize(end_of(end - 1) - start);
    if (Status s = file_->ReadAt(start, chunk); !s.ok()) return s;
    for (; i < end; ++i) {
      const uint8_t* rec = chunk.data() + (offsets_[i] - start);
      if (Status s = CheckRecord(i, rec); !s.ok()) return s;
      Result<Sample> sample = DecodeAt(i, rec + kRecordHeaderBytes);
      if (!sample.ok()) return sample.status();
      if (Status s = fn(i, *sample); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace dljob::storage
