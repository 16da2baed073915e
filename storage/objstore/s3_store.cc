// See s3_store.h.
#include "storage/objstore/s3_store.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "http/socket_client.h"
#include "storage/objstore/s3_xml.h"

namespace dljob::storage {
namespace {

bool Retryable(int status) { return status >= 500 || status == 429; }

std::chrono::milliseconds RetryAfter(const http::ClientResponse& r) {
  const std::string v = http::HeaderValue(r.headers, "Retry-After");
  int secs = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (v.empty() || ec != std::errc() || secs < 0) return std::chrono::milliseconds(0);
  return std::chrono::seconds(std::min(secs, 60));
}

}  // namespace

S3Store::S3Store(std::string scheme, std::string bucket, S3Config config, http::ClientPtr http,
                 S3StoreOptions options)
    : scheme_(std::move(scheme)),
      bucket_(std::move(bucket)),
      config_(std::move(config)),
      http_(std::move(http)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : RealClock()) {
  host_ = config_.endpoint.substr(config_.endpoint.find("://") + 3);
  // The default port is left out of Host, as clients and servers both do.
  const bool https = config_.endpoint.rfind("https://", 0) == 0;
  const std::string default_port = https ? ":443" : ":80";
  if (host_.size() > default_port.size() &&
      host_.compare(host_.size() - default_port.size(), default_port.size(), default_port) == 0) {
    host_.resize(host_.size() - default_port.size());
  }
  options_.max_attempts = std::max(1, options_.max_attempts);
  options_.part_size = std::max<uint64_t>(1, options_.part_size);
  options_.multipart_threshold = std::max<uint64_t>(1, options_.multipart_threshold);
  options_.part_concurrency = std::max(1, options_.part_concurrency);
}

Result<std::unique_ptr<S3Store>> S3Store::Open(const ObjectUrl& url, const S3Config& config,
                                               S3StoreOptions options) {
  http::ClientOptions client;
  client.base_url = config.endpoint;
  client.default_timeout = options.timeout;
  Result<std::unique_ptr<http::SocketClient>> http = http::SocketClient::Create(client);
  if (!http.ok()) return http.status().WithContext(url.ToString() + ": endpoint");
  return std::make_unique<S3Store>(url.scheme, url.bucket, config, std::move(*http),
                                   std::move(options));
}

std::string S3Store::Url(std::string_view key) const {
  return scheme_ + "://" + bucket_ + "/" + std::string(key);
}

Result<S3Store::Response> S3Store::Call(const std::string& method, const std::string& key,
                                        KeyValues query, KeyValues headers, std::string_view body,
                                        const std::string& url, std::initializer_list<int> ok) {
  const std::string path = "/" + bucket_ + (key.empty() ? "" : "/" + key);
  const std::string payload_hash = Sha256Hex(body);
  const SigV4Credentials creds{config_.access_key_id, config_.secret_access_key,
                               config_.session_token};
  std::chrono::milliseconds backoff = options_.initial_backoff;
  Result<Response> last = Status::Unavailable(url + ": no attempt made");
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    SigV4Request sig{method, path, query, headers, payload_hash};
    SignS3Request(sig, creds, config_.region, host_, clock_.Now());
    http::ClientRequest request;
    request.method = method;
    request.target = UriEncode(path, false);
    if (!query.empty()) request.target += "?" + CanonicalQuery(query);
    request.headers = std::move(sig.headers);
    request.body = std::string(body);
    http::ClientResult<http::ClientResponse> sent = http_->Send(request);
    last = sent.ok() ? Result<Response>(std::move(sent).value()) : sent.status();
    if (last.ok()) {
      if (std::find(ok.begin(), ok.end(), last->status) != ok.end()) return last;
      if (!Retryable(last->status)) return ErrorFor(*last, url);
    }
    if (attempt == options_.max_attempts) break;
    std::chrono::milliseconds wait = backoff;
    if (last.ok()) wait = std::max(wait, RetryAfter(*last));
    clock_.SleepFor(wait);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
  const std::string tries = " (after " + std::to_string(options_.max_attempts) + " attempts)";
  if (!last.ok()) {
    return Status::Unavailable(url + ": " + last.status().message() + tries +
                               "; check the endpoint " + config_.endpoint + " and the network");
  }
  return Status(ErrorFor(*last, url).code(), ErrorFor(*last, url).message() + tries);
}

Status S3Store::ErrorFor(const Response& r, const std::string& url) const {
  const S3ErrorBody e = ParseS3Error(r.body);
  const std::string detail = e.code.empty() ? "HTTP " + std::to_string(r.status)
                                            : e.code + (e.message.empty() ? "" : ": " + e.message);
  switch (r.status) {
    case 404:
      if (e.code == "NoSuchBucket") {
        return Status::NotFound(url + ": bucket \"" + bucket_ + "\" does not exist at " +
                                config_.endpoint);
      }
      return Status::NotFound(url + ": not found");
    case 401:
    case 403:
      return Status::FailedPrecondition(url + ": access denied (" + detail +
                                        "); check the access key id and secret");
    case 416:
      return Status::InvalidArgument(url + ": range not satisfiable (" + detail + ")");
    default:
      if (Retryable(r.status)) return Status::Unavailable(url + ": server error (" + detail + ")");
      return Status::InvalidArgument(url + ": request refused (HTTP " + std::to_string(r.status) +
                                     ", " + detail + ")");
  }
}

Result<std::string> S3Store::Get(std::string_view key) {
  const std::string url = Url(key);
  if (Status s = ValidateKey(key, url); !s.ok()) return s;
  Result<Response> r = Call("GET", std::string(key), {}, {}, {}, url, {200});
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

Result<std::string> S3Store::GetRange(std::string_view key, uint64_t offset, uint64_t length) {
  const std::string url = Url(key);
  if (Status s = ValidateKey(key, url); !s.ok()) return s;
  if (length == 0) return std::string();
  const std::string range =
      "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  Result<Response> r = Call("GET", std::string(key), {}, {{"Range", range}}, {}, url, {200, 206});
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kInvalidArgument &&
        r.status().message().find("range not satisfiable") != std::string::npos) {
      return Status::InvalidArgument(url + ": range starts at byte " + std::to_string(offset) +
                                     ", past the end of the object");
    }
    return r.status();
  }
  if (r->status == 200) {  // the server ignored the range: cut it out ourselves
    if (offset >= r->body.size()) {
      return Status::InvalidArgument(url + ": range starts at byte " + std::to_string(offset) +
                                     ", past the end of the object");
    }
    return r->body.substr(offset, length);
  }
  if (r->body.size() > length) r->body.resize(length);
  return std::move(r->body);
}

Status S3Store::Put(std::string_view key, std::string_view data) {
  const std::string url = Url(key);
  if (Status s = ValidateKey(key, url); !s.ok()) return s;
  if (data.size() >= options_.multipart_threshold) return PutMultipart(std::string(key), data, url);
  return Call("PUT", std::string(key), {}, {}, data, url, {200}).status();
}

Result<ListPage> S3Store::List(const ListOptions& options) {
  const std::string url = scheme_ + "://" + bucket_ + "/" + options.prefix;
  KeyValues query = {{"list-type", "2"}, {"max-keys", std::to_string(options.max_keys)}};
  if (!options.prefix.empty()) query.emplace_back("prefix", options.prefix);
  if (!options.continuation_token.empty()) {
    query.emplace_back("continuation-token", options.continuation_token);
  }
  Result<Response> r = Call("GET", "", std::move(query), {}, {}, url, {200});
  if (!r.ok()) return r.status();
  return ParseListObjectsV2(r->body, url);
}

Result<ObjectInfo> S3Store::Head(std::string_view key) {
  const std::string url = Url(key);
  if (Status s = ValidateKey(key, url); !s.ok()) return s;
  Result<Response> r = Call("HEAD", std::string(key), {}, {}, {}, url, {200});
  if (!r.ok()) return r.status();
  ObjectInfo info;
  info.key = std::string(key);
  const std::string length = http::HeaderValue(r->headers, "Content-Length");
  auto [p, ec] = std::from_chars(length.data(), length.data() + length.size(), info.size);
  if (length.empty() || ec != std::errc()) {
    return Status::Unavailable(url + ": HEAD answered without a valid Content-Length");
  }
  info.etag = Unquote(http::HeaderValue(r->headers, "ETag"));
  return info;
}

Status S3Store::Delete(std::string_view key) {
  const std::string url = Url(key);
  if (Status s = ValidateKey(key, url); !s.ok()) return s;
  Result<Response> r = Call("DELETE", std::string(key), {}, {}, {}, url, {200, 204, 404});
  return r.status();
}

}  // namespace dljob::storage
