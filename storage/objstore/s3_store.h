// S3Store: an ObjectStore over the S3 REST API — Amazon S3, Alibaba OSS's S3-compatible endpoint,
// MinIO, s3rver — with path-style addressing (https://endpoint/bucket/key) and SigV4 signing
// (sigv4.h; unsigned when the config has no credentials).
//
// Calls: GET (whole, or one "Range: bytes=a-b"), PUT, HEAD, DELETE, and ListObjectsV2
// (list-type=2) pages parsed by s3_xml.h. Each call is retried when no answer arrived or the
// answer was 5xx or 429, with exponential backoff (initial_backoff doubling to max_backoff, or the
// server's Retry-After when longer), re-signed every attempt; all S3 calls used here are
// idempotent (re-uploading a part replaces it), so retrying is safe.
//
// Put of an object of at least multipart_threshold bytes is a multipart upload: Create
// MultipartUpload, then the parts (s3_multipart.h: PlanParts) by up to part_concurrency threads,
// each part retried as above, then CompleteMultipartUpload with the parts' ETags (retried too when
// S3 answers 200 with an InternalError body). If any step fails for good, the upload is aborted
// (AbortMultipartUpload) so no parts are left behind, and no object appears: readers keep seeing
// the previous content, if any. The message names the part ("…: part 3 of 20: server error …").
// Messages name the object ("oss://bucket/key: access denied (SignatureDoesNotMatch: …); check
// the access key id and secret").
//
// Time comes only from the injected Clock (S3StoreOptions::clock): the SigV4 date and the
// backoff waits.
//
// Thread-safety: all methods may be called from many threads at once (the http::Client and the
// Clock are shared).
#pragma once

#include <chrono>
#include <string>

#include "base/clock.h"
#include "http/client.h"
#include "storage/objstore/object_store.h"
#include "storage/objstore/object_url.h"
#include "storage/objstore/sigv4.h"

namespace dljob::storage {

struct S3StoreOptions {
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10'000};
  std::chrono::milliseconds timeout{60'000};  // per request, of inactivity (http/socket_client.h)
  // Multipart uploads: objects of at least multipart_threshold bytes go in parts of part_size
  // (grown if 10,000 parts would not hold the object). S3, OSS and MinIO need part_size >= 5 MiB.
  uint64_t multipart_threshold = 16 << 20;
  uint64_t part_size = 8 << 20;
  int part_concurrency = 4;  // parts in flight at once (each holds no copy beyond its request)
  // Where the signing time comes from and how backoffs wait: RealClock() when null; tests pass a
  // testing::FakeClock and read its sleeps(). Must outlive the store.
  Clock* clock = nullptr;
};

class S3Store : public ObjectStore {
 public:
  // Over the given HTTP client, whose base URL must be config.endpoint.
  S3Store(std::string scheme, std::string bucket, S3Config config, http::ClientPtr http,
          S3StoreOptions options = {});
  // Over an http::SocketClient for config.endpoint.
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
  using Response = http::ClientResponse;

  // Signs and sends with retries; a Status only when no acceptable answer came back (`ok` lists
  // the statuses that are success for this call).
  Result<Response> Call(const std::string& method, const std::string& key, KeyValues query,
                        KeyValues headers, std::string_view body, const std::string& url,
                        std::initializer_list<int> ok);
  Status ErrorFor(const Response& response, const std::string& url) const;
  // s3_multipart.cc.
  Status PutMultipart(const std::string& key, std::string_view data, const std::string& url);
  Status CompleteMultipart(const std::string& key, const std::string& upload_id,
                           const std::string& body, const std::string& url);

  std::string scheme_, bucket_;
  S3Config config_;
  std::string host_;  // host[:port] of the endpoint, as signed and sent
  http::ClientPtr http_;
  S3StoreOptions options_;
  Clock& clock_;  // *options_.clock or RealClock()
};

}  // namespace dljob::storage
