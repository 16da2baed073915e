// The seam between the HTTP/1.1 server (http_server.h) and what it serves: the operator's
// endpoints (operator/app/endpoints.h) or the test API server's REST layer
// (tests/apiserver/rest_handler.h).
//
// The server parses one request at a time per connection into an HttpRequest and calls the
// Handler on that connection's thread. The handler answers through a ResponseWriter: either one
// whole response (Respond) or a streamed one (StartStream, then Write as often as needed), which
// the server sends with chunked transfer encoding — that is how watches and followed logs reach
// clients. Write() returns false once the client has gone away, so a watch loop knows to stop.
// Handlers run concurrently on many connections and must be thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dljob::http {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string path;    // percent-decoded path, no query: "/api/v1/namespaces/a/pods"
  std::string query;   // raw query string after '?', not decoded: "watch=1&labelSelector=a%3Db"
  HttpHeaders headers;
  std::string body;
  std::string remote;  // "127.0.0.1:53412", for logs
};

// The value of the first header named `name` (ASCII case-insensitive), or "".
std::string HeaderValue(const HttpHeaders& headers, std::string_view name);

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  // A complete response with Content-Length. Call at most once, and not after StartStream.
  virtual void Respond(int status, const HttpHeaders& headers, std::string_view body) = 0;
  // Sends the status line and headers of a chunked response.
  virtual void StartStream(int status, const HttpHeaders& headers) = 0;
  // Sends one chunk (empty data is ignored) and flushes it; false when the client is gone.
  virtual bool Write(std::string_view data) = 0;
  // Whether the client is still connected (a watch polls this while idle).
  virtual bool Connected() = 0;
};

using Handler = std::function<void(const HttpRequest&, ResponseWriter&)>;

}  // namespace dljob::http
