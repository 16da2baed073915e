// See open_store.h.
#include "storage/objstore/open_store.h"

#include "storage/objstore/local_dir_store.h"
#include "storage/objstore/s3_store.h"

namespace dljob::storage {

Result<OpenedSource> OpenSource(const std::string& from, const S3Flags& flags, const EnvLookup& env,
                                const std::string& field) {
  if (from.find("://") != std::string::npos) {
    Result<ObjectUrl> url = ParseObjectUrl(from, field);
    if (!url.ok()) return url.status();
    Result<S3Config> config = ResolveS3Config(*url, flags, env);
    if (!config.ok()) return config.status().WithContext(field);
    Result<std::unique_ptr<S3Store>> store = S3Store::Open(*url, *config);
    if (!store.ok()) return store.status().WithContext(field);
    return OpenedSource{std::move(*store), url->prefix};
  }
  Result<std::unique_ptr<LocalDirStore>> store = LocalDirStore::Open(from);
  if (!store.ok()) {
    return store.status().WithContext(field + " (a directory, or an oss:// or s3:// URL)");
  }
  return OpenedSource{std::move(*store), ""};
}

}  // namespace dljob::storage
