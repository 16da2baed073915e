// ObjectStore: one bucket of an object store, seen as flat keys mapping to byte strings.
//
// Two real implementations: S3Store (s3_store.h: S3, Alibaba OSS and MinIO through the
// S3-compatible HTTP API) and LocalDirStore (local_dir_store.h: a directory as a bucket, which is
// also how an NFS-mounted dataset is read). Cache warm-up (cache_warmup.h) and the loader copy and
// read datasets through this interface without knowing which one they have.
//
// Keys are UTF-8 strings without a leading '/', '/' separating "directories" by convention only.
// Errors are Statuses whose message starts with the object's URL (Url(key), e.g.
// "s3://bucket/train-00001-of-00004.shard: not found"): kNotFound for a missing key,
// kInvalidArgument for a bad key or range, kFailedPrecondition for refused credentials,
// kUnavailable when the store could not be reached (after the implementation's own retries).
//
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace dljob::storage {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  // Opaque version tag: changes whenever the content changes. For S3 a single-part upload's ETag
  // is the hex MD5 of the content (IsMd5Etag); quotes are stripped.
  std::string etag;
};

struct ListOptions {
  std::string prefix;              // only keys that start with this
  std::string continuation_token;  // "" for the first page; ListPage::next_token after that
  int max_keys = 1000;             // at most this many per page (servers may cap it lower)
};

struct ListPage {
  std::vector<ObjectInfo> objects;  // in ascending key order
  std::string next_token;           // "" when this is the last page
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // "s3://bucket/key", "oss://bucket/key", "/abs/dir/key": how messages name an object.
  virtual std::string Url(std::string_view key) const = 0;

  virtual Result<std::string> Get(std::string_view key) = 0;
  // Bytes [offset, offset + length) of the object, fewer if it ends sooner; an offset at or past
  // the end gives kInvalidArgument.
  virtual Result<std::string> GetRange(std::string_view key, uint64_t offset, uint64_t length) = 0;
  // Creates or replaces the object. Readers see the old or the new content, never a mix.
  virtual Status Put(std::string_view key, std::string_view data) = 0;
  virtual Result<ListPage> List(const ListOptions& options) = 0;
  virtual Result<ObjectInfo> Head(std::string_view key) = 0;
  // Deleting a missing key is not an error (as in S3).
  virtual Status Delete(std::string_view key) = 0;
};
using ObjectStorePtr = std::unique_ptr<ObjectStore>;

// Every object under `prefix`, following the pages.
Result<std::vector<ObjectInfo>> ListAll(ObjectStore& store, const std::string& prefix);

// True for a 32-hex-digit ETag: S3's MD5 of a single-part upload's content.
bool IsMd5Etag(std::string_view etag);

// Checks a key: 1-1024 bytes, no leading '/', no NUL, no "." or ".." path segment, no empty
// segment ("a//b"). `url` names the object in the message.
Status ValidateKey(std::string_view key, const std::string& url);

}  // namespace dljob::storage
