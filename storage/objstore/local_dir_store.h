// LocalDirStore: a directory used as a bucket. Key "a/b.shard" is the file ROOT/a/b.shard.
//
// What an NFS mount, a hostPath or a local cache looks like through the ObjectStore interface.
// Put is Env::WriteFileAtomically (base/env.h): a temporary file next to the target
// (kTempFilePrefix, ".dljob-tmp-*", never listed), synced and renamed into place, so a reader sees
// the old or the new object, never part of one; parent directories are created as needed. Delete
// removes the file and any directories it leaves empty below ROOT. List walks ROOT recursively and
// returns regular files in key order (symlinks to files are followed); its continuation token is
// the last key of the previous page. The ETag is
// "<size>-<mtime ns>" in hex: it changes when a file is rewritten, but it is not an MD5.
//
// Thread-safety: all methods may be called from many threads at once (the file system arbitrates;
// concurrent Puts of one key leave one of them in place).
#pragma once

#include <string>

#include "base/env.h"
#include "storage/objstore/object_store.h"

namespace dljob::storage {

class LocalDirStore : public ObjectStore {
 public:
  // `root` must exist and be a directory (kNotFound / kInvalidArgument otherwise).
  static Result<std::unique_ptr<LocalDirStore>> Open(const std::string& root);

  const std::string& root() const { return root_; }

  std::string Url(std::string_view key) const override;
  Result<std::string> Get(std::string_view key) override;
  Result<std::string> GetRange(std::string_view key, uint64_t offset, uint64_t length) override;
  Status Put(std::string_view key, std::string_view data) override;
  Result<ListPage> List(const ListOptions& options) override;
  Result<ObjectInfo> Head(std::string_view key) override;
  Status Delete(std::string_view key) override;

 private:
  explicit LocalDirStore(std::string root) : root_(std::move(root)) {}
  // The file of a valid key, or the key's error.
  Result<std::string> PathOf(std::string_view key) const;

  std::string root_;  // absolute, no trailing '/'
};

inline constexpr const char* kLocalTempMarker = kTempFilePrefix;

}  // namespace dljob::storage
