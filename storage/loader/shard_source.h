// Where the loader's shards come from: a local (or NFS-mounted) dataset directory, or straight
// from an object store (S3, OSS, MinIO) with ranged reads — no local copy.
//
// Both end as a ShardSet: the split's ShardReaders (shard_reader.h) in index order, opened and
// checked (header, footer, index), plus the class names. The seam below ShardReader is
// RandomAccessFile (storage/random_access_file.h): a local file read with pread, or an
// ObjectStoreFile whose every ReadAt is one ranged GET. The loader reads neighbouring records in
// one call, so an object-store epoch costs about one request per batch per shard touched.
//
// Thread-safety: ObjectStoreFile::ReadAt may be called from many threads (ObjectStore is
// thread-safe). The Open functions are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/objstore/object_store.h"
#include "storage/random_access_file.h"
#include "storage/shard_reader.h"

namespace dljob::storage::loader {

// One object read through ranged GETs. Shares ownership of the store.
class ObjectStoreFile : public RandomAccessFile {
 public:
  // Heads the object for its size: kNotFound etc. as the store says.
  static Result<RandomAccessFilePtr> Open(std::shared_ptr<ObjectStore> store, std::string key);

  Status ReadAt(uint64_t offset, std::span<uint8_t> dst) const override;
  uint64_t size() const override { return size_; }
  const std::string& name() const override { return name_; }

 private:
  ObjectStoreFile(std::shared_ptr<ObjectStore> store, std::string key, uint64_t size)
      : store_(std::move(store)), key_(std::move(key)), size_(size), name_(store_->Url(key_)) {}

  std::shared_ptr<ObjectStore> store_;
  std::string key_;
  uint64_t size_;
  std::string name_;
};

struct ShardSet {
  std::string split;
  std::vector<ShardReaderPtr> shards;  // index order
  std::vector<std::string> classes;    // labels.txt; empty if there is none
  std::vector<uint64_t> records() const;
};

// DIR/<split>-*.shard and DIR/labels.txt. kNotFound when the split has no shards (the message
// lists the splits there are); kInvalidArgument for an incomplete set or a damaged shard.
Result<ShardSet> OpenLocalSplit(const std::string& dir, const std::string& split);

// The same layout under `prefix` of an object store: "" (the bucket's top) or a "directory",
// with or without its trailing '/' ("sets/a" and "sets/a/" both mean the objects sets/a/*, as
// oss://bucket/sets/a parses to prefix "sets/a").
Result<ShardSet> OpenStoreSplit(std::shared_ptr<ObjectStore> store, const std::string& prefix,
                                const std::string& split);

}  // namespace dljob::storage::loader
