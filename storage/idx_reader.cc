#include "storage/idx_reader.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>

#include "base/env.h"

namespace dljob::storage {
namespace {

constexpr uint8_t kTypeUnsignedByte = 0x08;
constexpr size_t kMaxDims = 8;

uint32_t ReadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

bool IsGzip(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

Result<std::vector<uint8_t>> ReadRaw(const std::string& path) {
  Result<std::string> text = DefaultEnv().ReadFile(path);
  if (!text.ok()) return text.status();
  return std::vector<uint8_t>(text->begin(), text->end());
}

Result<std::vector<uint8_t>> Gunzip(const std::vector<uint8_t>& compressed,
                                    const std::string& path) {
  z_stream zs{};
  // 15 + 32: accept a zlib or gzip header, detected automatically.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return Status::Internal(path + ": inflateInit failed");
  zs.next_in = const_cast<Bytef*>(compressed.data());
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::vector<uint8_t> out;
  uint8_t chunk[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = chunk;
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string why = zs.msg != nullptr   ? zs.msg
                        : rc == Z_BUF_ERROR ? "compressed data is truncated"
                                            : "inflate error " + std::to_string(rc);
      inflateEnd(&zs);
      return Status::InvalidArgument(path + ": corrupt gzip data: " + why);
    }
    out.insert(out.end(), chunk, chunk + (sizeof(chunk) - zs.avail_out));
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

int64_t IdxArray::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Result<IdxArray> ParseIdx(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 4) {
    return Status::InvalidArgument(name + ": too short for an IDX header (" +
                                   std::to_string(bytes.size()) + " bytes)");
  }
  if (bytes[0] != 0 || bytes[1] != 0) {
    return Status::InvalidArgument(name + ": not an IDX file (bad magic number)");
  }
  if (bytes[2] != kTypeUnsignedByte) {
    char type[8];
    std::snprintf(type, sizeof(type), "0x%02x", bytes[2]);
    return Status::InvalidArgument(name + ": unsupported IDX element type " + type +
                                   " (only unsigned bytes, 0x08)");
  }
  const size_t ndims = bytes[3];
  if (ndims == 0 || ndims > kMaxDims) {
    return Status::InvalidArgument(name + ": bad IDX dimension count " + std::to_string(ndims));
  }
  const size_t header = 4 + 4 * ndims;
  if (bytes.size() < header) {
    return Status::InvalidArgument(name + ": truncated IDX header");
  }
  IdxArray array;
  uint64_t count = 1;
  for (size_t i = 0; i < ndims; ++i) {
    uint32_t d = ReadBigEndian32(&bytes[4 + 4 * i]);
    count *= d;
    if (count > (uint64_t{1} << 40)) return Status::InvalidArgument(name + ": IDX array too large");
    array.dims.push_back(d);
  }
  const uint64_t have = bytes.size() - header;
  if (have < count) {
    return Status::InvalidArgument(name + ": truncated: header promises " + std::to_string(count) +
                                   " bytes of data, file has " + std::to_string(have));
  }
  if (have > count) {
    return Status::InvalidArgument(name + ": " + std::to_string(have - count) +
                                   " unexpected bytes after the data");
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return array;
}

Result<std::vector<uint8_t>> ReadMaybeGzipped(const std::string& path) {
  Result<std::vector<uint8_t>> raw = ReadRaw(path);
  if (!raw.ok() || !IsGzip(*raw)) return raw;
  return Gunzip(*raw, path);
}

Result<IdxArray> ReadIdxFile(const std::string& path) {
  Result<std::vector<uint8_t>> bytes = ReadMaybeGzipped(path);
  if (!bytes.ok()) return bytes.status();
  return ParseIdx(*bytes, path);
}

std::vector<uint8_t> EncodeIdx(const IdxArray& array) {
  std::vector<uint8_t> out = {0, 0, kTypeUnsignedByte, static_cast<uint8_t>(array.dims.size())};
  for (int64_t d : array.dims) {
    uint32_t v = static_cast<uint32_t>(d);
    out.insert(out.end(), {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                           static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)});
  }
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

}  // namespace dljob::storage
