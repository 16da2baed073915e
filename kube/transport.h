// Transport: the HTTP seam under HttpApi. One request in, one response out — or, for watches and
// followed logs, a response whose body is read incrementally.
//
// HttpApi builds every Kubernetes call as a Request (method, path and query relative to the API
// server's URL, headers, body) and never sees sockets or TLS. Two implementations: the cpprestsdk
// one (cpprest_transport.h: HTTPS, mTLS, CA bundles, timeouts) used in production, and in-memory
// fakes in tests. A Transport answers every HTTP status as a Response (404 is a Response, not an
// error); it returns an ApiError (http == 0) only when no HTTP answer arrived: the connection was
// refused or reset, TLS failed, the request timed out or was cancelled. The error's reason tells
// these apart (kReason* below), so the retry policy can tell a request that never left this
// process from one the server may have acted on.
//
// Thread-safety: Send() and Open() may be called from many threads at once. A BodyStream belongs
// to one reader thread; its Cancel() may be called from any thread and makes a blocked Read()
// return promptly.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kube/api.h"

namespace dljob::kube {

// Reasons of transport errors (ApiError with http == 0).
inline constexpr const char* kReasonConnectFailed = "ConnectFailed";  // request never sent
inline constexpr const char* kReasonTimeout = "Timeout";
inline constexpr const char* kReasonCancelled = "Cancelled";
inline constexpr const char* kReasonTransportError = "TransportError";  // reset, TLS, protocol

using Headers = std::vector<std::pair<std::string, std::string>>;

// The value of the first header named `name` (ASCII case-insensitive), or "".
std::string FindHeader(const Headers& headers, std::string_view name);

struct Request {
  std::string method = "GET";
  std::string path_and_query;  // "/api/v1/namespaces/a/pods?limit=10", already percent-encoded
  Headers headers;
  std::string body;
  // How long the transport may wait with nothing arriving; zero = the transport's default.
  std::chrono::milliseconds timeout{0};
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;
};

// The body of a streamed response, read as it arrives.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // The next bytes (never empty), std::nullopt at the end of the body, or an error
  // (reason kReasonCancelled after Cancel()).
  virtual ApiResult<std::optional<std::string>> Read() = 0;
  virtual void Cancel() = 0;
};
using BodyStreamPtr = std::unique_ptr<BodyStream>;

struct StreamResponse {
  int status = 0;
  Headers headers;
  BodyStreamPtr body;  // never null
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual ApiResult<Response> Send(const Request& request) = 0;
  // Returns once the status line and headers have arrived.
  virtual ApiResult<StreamResponse> Open(const Request& request) = 0;
};
using TransportPtr = std::unique_ptr<Transport>;

// Reads a stream to its end (for error bodies of streamed requests), at most `limit` bytes.
ApiResult<std::string> ReadAll(BodyStream& body, size_t limit = 1 << 20);

}  // namespace dljob::kube
