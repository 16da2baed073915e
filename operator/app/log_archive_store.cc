// See log_archive_store.h.
#include "operator/app/log_archive_store.h"

#include "base/base64.h"
#include "base/env.h"
#include "storage/objstore/local_dir_store.h"
#include "storage/objstore/s3_store.h"

namespace dljob::op {

Result<std::map<std::string, std::string>> SecretKeys(const nlohmann::json& secret,
                                                      const std::string& field) {
  std::map<std::string, std::string> keys;
  const nlohmann::json data = secret.value("data", nlohmann::json::object());
  if (!data.is_object()) return Status::InvalidArgument(field + ": the Secret's data is not a map");
  for (auto it = data.begin(); it != data.end(); ++it) {
    std::optional<std::string> value =
        it.value().is_string() ? Base64Decode(it.value().get<std::string>()) : std::nullopt;
    if (!value) {
      return Status::InvalidArgument(field + ": data." + it.key() + " is not base64");
    }
    keys[it.key()] = *value;
  }
  return keys;
}

storage::EnvLookup SecretEnv(const std::string& scheme,
                             const std::map<std::string, std::string>& keys,
                             storage::EnvLookup fallback) {
  const bool oss = scheme == "oss";
  const std::map<std::string, std::string> names = {
      {oss ? "OSS_ACCESS_KEY_ID" : "AWS_ACCESS_KEY_ID", "akId"},
      {oss ? "OSS_ACCESS_KEY_SECRET" : "AWS_SECRET_ACCESS_KEY", "akSecret"},
      {oss ? "OSS_ENDPOINT" : "AWS_ENDPOINT_URL_S3", "endpoint"},
      {oss ? "OSS_REGION" : "AWS_REGION", "region"},
  };
  return [names, keys,
          fallback = std::move(fallback)](const std::string& name) -> std::optional<std::string> {
    auto n = names.find(name);
    if (n != names.end()) {
      auto k = keys.find(n->second);
      if (k != keys.end() && !k->second.empty()) return k->second;
    }
    return fallback ? fallback(name) : std::nullopt;
  };
}

Result<ArchiveLocation> OpenLogArchiveStore(const std::string& where,
                                            const std::map<std::string, std::string>& keys,
                                            const storage::EnvLookup& env) {
  const std::string field = "--log-archive";
  if (!storage::IsObjectUrl(where)) {
    if (where.empty() || where[0] != '/') {
      return Status::InvalidArgument(
          field + ": \"" + where +
          "\" is neither an absolute directory nor an oss:// or s3:// URL");
    }
    if (Status s = DefaultEnv().CreateDirs(where); !s.ok()) return s.WithContext(field);
    Result<std::unique_ptr<storage::LocalDirStore>> store = storage::LocalDirStore::Open(where);
    if (!store.ok()) return store.status().WithContext(field);
    return ArchiveLocation{std::move(store).value(), ""};
  }
  Result<storage::ObjectUrl> url = storage::ParseObjectUrl(where, field);
  if (!url.ok()) return url.status();
  Result<storage::S3Config> config =
      storage::ResolveS3Config(*url, {}, SecretEnv(url->scheme, keys, env));
  if (!config.ok()) return config.status().WithContext(field);
  Result<std::unique_ptr<storage::S3Store>> store = storage::S3Store::Open(*url, *config);
  if (!store.ok()) return store.status().WithContext(field);
  std::string prefix = url->prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return ArchiveLocation{std::move(store).value(), prefix};
}

}  // namespace dljob::op
