// OpenSource: turns a user's `--from` (an oss:// or s3:// URL, or a local/NFS directory) into an
// ObjectStore and the prefix to read under it — the front half of `dljob data cache`.
//
// oss:// and s3:// open an S3Store with settings from ResolveS3Config (flags, then environment);
// anything else must be an existing directory and opens a LocalDirStore on it with an empty
// prefix. Messages name the flag ("--from: ..."). Opening makes no network request.
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "storage/objstore/object_store.h"
#include "storage/objstore/object_url.h"

namespace dljob::storage {

struct OpenedSource {
  ObjectStorePtr store;
  std::string prefix;
};

Result<OpenedSource> OpenSource(const std::string& from, const S3Flags& flags, const EnvLookup& env,
                                const std::string& field = "--from");

}  // namespace dljob::storage
