// RandomAccessFile: positioned reads from an immutable byte source, the seam under ShardReader.
//
// Two implementations: a local file read with pread(2) (OpenLocalFile), and bytes held in memory
// (MemoryFile; tests, fuzzing, and data already fetched from an object store). Later work can add
// one backed by ranged GETs. ReadAt and size are thread-safe in both: any number of threads may
// read one file at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace dljob::storage {

class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Fills all of `dst` from byte `offset`. A read past the end is kInvalidArgument ("truncated"),
  // an I/O error kUnavailable; both name the file and offset.
  virtual Status ReadAt(uint64_t offset, std::span<uint8_t> dst) const = 0;
  // The size when the file was opened.
  virtual uint64_t size() const = 0;
  // The name used in error messages (a path, or a test's label).
  virtual const std::string& name() const = 0;
};
using RandomAccessFilePtr = std::unique_ptr<RandomAccessFile>;

// Opens `path` for reading. kNotFound if it does not exist.
Result<RandomAccessFilePtr> OpenLocalFile(const std::string& path);

class MemoryFile : public RandomAccessFile {
 public:
  MemoryFile(std::string name, std::vector<uint8_t> bytes)
      : name_(std::move(name)), bytes_(std::move(bytes)) {}
  Status ReadAt(uint64_t offset, std::span<uint8_t> dst) const override;
  uint64_t size() const override { return bytes_.size(); }
  const std::string& name() const override { return name_; }

 private:
  std::string name_;
  std::vector<uint8_t> bytes_;
};

}  // namespace dljob::storage
