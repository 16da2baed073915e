// WarmCache: copies every object under a prefix of an ObjectStore (OSS/S3, or a NAS directory
// through LocalDirStore) into a local directory, typically on the node's SSD, before training.
//
// Object "<prefix>/a/b.shard" becomes "<local_dir>/a/b.shard" (the prefix is taken as a
// directory: "imagenet/train" means "imagenet/train/"). Guarantees:
//   * Nothing incomplete is ever visible under its final name: bytes go to "<name>.part" in
//     chunk-sized ranged reads and the file is renamed into place only once complete and checked.
//   * Resumable: an interrupted run leaves its .part files; the next run continues each from its
//     current length instead of starting over.
//   * Checked: a copy whose source ETag is an MD5 (S3 single-part uploads) must hash to it; a
//     record shard (*.shard, record_shard.h) must open and pass every record's CRC. A resumed
//     copy that fails is downloaded once more from scratch; a fresh one that fails is an error
//     naming the object.
//   * Incremental: <local_dir>/.dljob-cache/objects records the size and ETag of every object
//     copied; an object whose local file still has that size and whose ETag is unchanged is
//     skipped. When every object is in place, <local_dir>/.dljob-cache/complete names the source,
//     and a later run for the same source returns at once without listing (unless
//     trust_marker is false).
// Objects are downloaded by `parallel` threads, one object per thread at a time.
//
// Thread-safety: WarmCache may run concurrently for different local_dirs, not for the same one.
// The progress callback is called from the worker threads, one call at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "storage/objstore/object_store.h"

namespace dljob::storage {

inline constexpr char kCacheMetaDir[] = ".dljob-cache";
inline constexpr char kPartSuffix[] = ".part";

struct WarmCacheProgress {
  uint64_t bytes_done = 0;  // includes objects skipped as already present and resumed .part bytes
  uint64_t bytes_total = 0;
  uint64_t objects_done = 0;
  uint64_t objects_total = 0;
};

struct WarmCacheOptions {
  int parallel = 8;
  uint64_t chunk_bytes = 8ull << 20;  // bytes per ranged GET
  bool verify = true;                 // MD5 ETags and shard CRCs (above)
  bool trust_marker = true;
  std::function<void(const WarmCacheProgress&)> progress;
  // When set and it becomes true, workers stop after their current chunk and WarmCache returns
  // kUnavailable ("interrupted"), leaving .part files to resume from.
  const std::atomic<bool>* cancel = nullptr;
};

struct WarmCacheResult {
  bool already_complete = false;  // the marker matched; nothing was listed or copied
  uint64_t objects = 0;           // under the prefix
  uint64_t bytes = 0;
  uint64_t objects_copied = 0;
  uint64_t objects_skipped = 0;   // already present with the same size and ETag
  uint64_t bytes_downloaded = 0;  // this run, retries included
};

Result<WarmCacheResult> WarmCache(ObjectStore& source, const std::string& prefix,
                                  const std::string& local_dir, const WarmCacheOptions& options);

}  // namespace dljob::storage
