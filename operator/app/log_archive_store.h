// Where dljob-operator keeps job logs (--log-archive, --log-archive-secret), opened as the
// ObjectStore and key prefix that metrics::LogArchive (operator/metrics/log_archive.h) works on.
//
//   --log-archive=/var/log/dljob               a directory (the chart mounts a
//   PersistentVolumeClaim
//                                              there): a LocalDirStore, created when missing
//   --log-archive=s3://bucket/prefix           S3, OSS or another S3-compatible store: an S3Store,
//   --log-archive=oss://bucket/prefix          its settings from storage/objstore/object_url.h
//
// Credentials for a bucket come from a Secret with the keys oss:// data volumes use (akId,
// akSecret, and optionally endpoint and region; operator/controller/volumes.h), read once at
// start-up: they stand in for the environment variables ResolveS3Config reads
// (OSS_ACCESS_KEY_ID, …, or AWS_ACCESS_KEY_ID, … for s3://), which fill in what the Secret
// leaves out. Messages name the flag. Pure except for opening (a directory is created; nothing
// is sent over the network). Thread-safe.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "storage/objstore/object_store.h"
#include "storage/objstore/object_url.h"

namespace dljob::op {

struct ArchiveLocation {
  storage::ObjectStorePtr store;
  std::string prefix;  // keys under it; "" for a directory
};

// The Secret's data, base64-decoded; errors name `field` (--log-archive-secret) and the key.
Result<std::map<std::string, std::string>> SecretKeys(const nlohmann::json& secret,
                                                      const std::string& field);

// The environment a bucket's settings are resolved from: the Secret's keys under the names
// ResolveS3Config reads for `scheme`, then `fallback`.
storage::EnvLookup SecretEnv(const std::string& scheme,
                             const std::map<std::string, std::string>& keys,
                             storage::EnvLookup fallback);

Result<ArchiveLocation> OpenLogArchiveStore(const std::string& where,
                                            const std::map<std::string, std::string>& keys,
                                            const storage::EnvLookup& env);

}  // namespace dljob::op
