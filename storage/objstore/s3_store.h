// S3Store: an ObjectStore over the S3 REST API — Amazon S3, Alibaba OSS's S3-compatible endpoint,
// MinIO, s3rver — with path-style addressing (https://endpoint/bucket/key) and SigV4 signing
// (sigv4.h; unsigned when the config has no credentials).
//
// Calls: GET (whole, or one "Range: bytes=a-b"), PUT (one request; objects up to S3's 5 GiB
// single-PUT limit), HEAD, DELETE, and ListObjectsV2 (list-type=2) pages parsed by s3_xml.h.
// Each call is retried when no answer arrived or the answer was 5xx or 429, with exponential
// backoff (initial_backoff doubling to max_backoff, or the server's Retry-After when longer),
// re-signed every attempt; all S3 calls used here are idempotent, so retrying is safe.
// Messages name the object ("oss://bucket/key: access denied (SignatureDoesNotMatch: …); check
// the access key id and secret").
//
// Thread-safety: all methods may be called from many threads at once (the HttpClient is shared).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "storage/objstore/http_client.h"
#include "storage/objstore/object_store.h"
#include "storage/objstore/object_url.h"

namespace dljob::storage {

struct S3StoreOptions {
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10'000};
  std::chrono::milliseconds timeout{60'000};  // per request, of inactivity (cpprestsdk client)
  // Injected for tests; default to sleeping and the system clock.
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<std::chrono::system_clock::time_point()> now;
};

class S3Store : public ObjectStore {
 public:
  // Over the given HttpClient, whose base URL must be config.endpoint.
  S3Store(std::string scheme, std::string bucket, S3Config config, HttpClientPtr http,
          S3StoreOptions options = {});
  // Over a cpprestsdk client for config.endpoint.
  static Result<std::unique_ptr<S3Store>> Open(const ObjectUrl& url, const S3Config& config,
                                               S3StoreOptions options = {});

  std::string Url(std::string_view key) const override;
  Result<std::string> Get(std::string_view key) override;
  Result<std::string> GetRange(std::string_view key, uint64_t offset, uint64_t length) override;
  Status Put(std::string_view key, std::string_view data) override;
  Result<ListPage> List(const ListOptions& options) override;
  Result<ObjectInfo> Head(std::string_view key) override;
  Status Delete(std::string_view key) override;

 private:
  // Signs and sends with retries; a Status only when no acceptable answer came back (`ok` lists
  // the statuses that are success for this call).
  Result<HttpResponse> Call(const std::string& method, const std::string& key, KeyValues query,
                            KeyValues headers, std::string_view body, const std::string& url,
                            std::initializer_list<int> ok);
  Status ErrorFor(const HttpResponse& response, const std::string& url) const;

  std::string scheme_, bucket_;
  S3Config config_;
  std::string host_;  // host[:port] of the endpoint, as signed and sent
  HttpClientPtr http_;
  S3StoreOptions options_;
};

}  // namespace dljob::storage
