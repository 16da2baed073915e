// Reading IDX files, the format of MNIST and Fashion-MNIST.
//
// An IDX file is a 4-byte magic number (two zero bytes, a type code, the number of dimensions),
// one big-endian uint32 per dimension, then the elements in row-major order. Only unsigned-byte
// elements (type 0x08) are supported, which is what (Fashion-)MNIST uses. Files may be gzipped or
// plain; ReadIdxFile tells them apart by content, not by name.
//
// Every malformed input (bad magic, unsupported type, truncated data, trailing bytes, a corrupt
// gzip stream) is reported as a Status naming the file and what is wrong. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace dljob::storage {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // prod(dims) elements, row-major

  int64_t num_elements() const;
};

// Parses IDX bytes already in memory. `name` is used in error messages.
Result<IdxArray> ParseIdx(std::span<const uint8_t> bytes, const std::string& name);

// Reads a whole file, gunzipping it if it is gzip-compressed.
Result<std::vector<uint8_t>> ReadMaybeGzipped(const std::string& path);

// ReadMaybeGzipped + ParseIdx.
Result<IdxArray> ReadIdxFile(const std::string& path);

// Serialises an unsigned-byte array as IDX bytes (uncompressed). For tests and tools.
std::vector<uint8_t> EncodeIdx(const IdxArray& array);

}  // namespace dljob::storage
