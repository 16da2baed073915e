// HttpClient: the HTTP seam under S3Store. One request in, one whole response out.
//
// S3Store builds every S3 call as an HttpRequest (method, already-encoded target relative to the
// endpoint, headers, body) and never sees sockets or TLS. The production implementation is
// cpprestsdk's client (MakeCpprestHttpClient); tests may wrap it to inject failures. Every HTTP
// status is a response (a 404 is not an error); a Status (kUnavailable) comes back only when no
// HTTP answer arrived: connection refused or reset, TLS failure, timeout.
//
// Thread-safety: Send() may be called from many threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "storage/objstore/sigv4.h"

namespace dljob::storage {

struct HttpRequest {
  std::string method = "GET";
  std::string target;  // "/bucket/key?list-type=2", percent-encoded
  KeyValues headers;   // sent as given (Host included, so it matches what was signed)
  std::string body;
};

struct HttpResponse {
  int status = 0;
  KeyValues headers;
  std::string body;
  // The first header named `name` (ASCII case-insensitive), or "".
  std::string Header(std::string_view name) const;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
};
using HttpClientPtr = std::unique_ptr<HttpClient>;

// `base_url` is "http[s]://host[:port]". `timeout` limits each request's inactivity.
Result<HttpClientPtr> MakeCpprestHttpClient(const std::string& base_url,
                                            std::chrono::milliseconds timeout);

}  // namespace dljob::storage
