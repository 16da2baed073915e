// Client: the HTTP client seam. One request in, one response out — or, for watches and followed
// logs, a response whose body is read as it arrives.
//
// Callers (the Kubernetes client, kube/http_api.h; the S3 store, storage/objstore/s3_store.h)
// build each call as a ClientRequest — method, target relative to the client's base URL,
// headers, body — and never see sockets or TLS. One production implementation, HTTP/1.1 on
// sockets and OpenSSL (socket_client.h: HTTPS with a CA bundle, mutual TLS, HTTP proxies,
// inactivity and total timeouts, kept-alive connections, streamed bodies), made from
// ClientOptions, and a scripted fake for tests (testing/fake_client.h).
//
// Every HTTP status is a response (a 404 is an answer, not an error). A ClientError comes back
// only when no HTTP answer arrived, and its Failure says why, so a retry policy can tell a
// request that never left this process (kConnectFailed) from one the server may have acted on.
//
// Thread-safety: Send() and Open() may be called from many threads at once. A BodyStream belongs
// to one reader thread at a time; its Cancel() may be called from any thread and makes a blocked
// Read() return promptly.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/readiness.h"
#include "base/status.h"
#include "http/http.h"

namespace dljob::http {

// Why no HTTP answer arrived.
enum class Failure {
  kConnectFailed,   // the request was never sent: refused, unresolvable, unreachable
  kTimeout,         // nothing arrived for the request's inactivity limit
  kCancelled,       // BodyStream::Cancel()
  kTransportError,  // reset, TLS or protocol failure, a body cut short
};

struct ClientError {
  Failure failure = Failure::kTransportError;
  std::string message;  // "<METHOD> <url>: <what happened>"

  // kUnavailable with the message, for callers that do not branch on the Failure.
  Status ToStatus() const { return Status::Unavailable(message); }
};

// A value or a ClientError (base/status.h's Result). status() is the error's ToStatus().
template <typename T>
using ClientResult = Result<T, ClientError>;

struct ClientRequest {
  std::string method = "GET";
  std::string target;   // path and query, already percent-encoded: "/api/v1/pods?limit=10"
  HttpHeaders headers;  // sent as given (a signed Host stays as signed)
  // Sent when non-empty, and always for POST, PUT and PATCH, with a Content-Length; as
  // application/octet-stream unless `headers` name a Content-Type.
  std::string body;
  // How long the client may wait with nothing arriving; zero = the client's default.
  std::chrono::milliseconds timeout{0};
  // A limit on the whole exchange however steadily bytes arrive, for callers with a deadline of
  // their own (kube/http_api.h): Send() fails with kTimeout when the complete answer has not
  // arrived within it, Open() when the status line and headers have not (the body then streams
  // under `timeout` alone). Zero = no limit.
  std::chrono::milliseconds total_timeout{0};
};

// How a client reaches its one server: what a kubeconfig's cluster entry says (or an S3 endpoint).
struct ClientOptions {
  std::string base_url;  // "http[s]://host[:port]"; a trailing '/' is ignored
  std::chrono::milliseconds default_timeout{30'000};  // for requests whose timeout is zero
  // TLS, for https only; PEM text, not file names.
  std::string ca_pem;           // trust exactly these CAs; empty: the system's roots
  std::string client_cert_pem;  // with client_key_pem: presented for mutual TLS
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  // https only: the host name (or IP address) the server's certificate must name and the name
  // sent as SNI (kubeconfig's tls-server-name), for a server reached by an address its
  // certificate does not name. "" = base_url's host.
  std::string tls_server_name;
  // The HTTP proxy for every request, "" for none: "http://[user[:password]@]host[:port]" (port
  // 80 when not given; user and password percent-decoded), as kubeconfig's proxy-url. It applies
  // to every request of this client; choosing it per host from HTTPS_PROXY, HTTP_PROXY and
  // NO_PROXY is http/proxy.h's ProxyForUrl, for the caller. https:// proxies (TLS to the proxy)
  // and socks5:// ones are refused when the client is made.
  std::string proxy_url;
};

struct ClientResponse {
  int status = 0;
  HttpHeaders headers;  // look one up with HeaderValue (http.h)
  std::string body;     // empty for HEAD
};

// What a read that does not wait found (BodyStream::TryRead).
struct ReadyBytes {
  std::string bytes;  // the next bytes; empty when none have arrived yet, or at the end
  bool end = false;   // the body has ended
  // With no bytes and no end: what to wait for before trying again. `until` is the stream's
  // inactivity limit: a TryRead then, with still nothing, fails with kTimeout as Read() would.
  Readiness wait;
};

// The body of a streamed response, read as it arrives.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // The next bytes (never empty), std::nullopt at the end of the body, or an error
  // (kCancelled after Cancel()).
  virtual ClientResult<std::optional<std::string>> Read() = 0;
  // Read() without waiting, for a reader that waits on many streams at once (base/readiness.h).
  // The default calls Read(): right only for streams whose Read() never waits (a fake's
  // scripted chunks); a stream over a socket overrides it.
  virtual ClientResult<ReadyBytes> TryRead();
  virtual void Cancel() = 0;
};
using BodyStreamPtr = std::unique_ptr<BodyStream>;

struct StreamedResponse {
  int status = 0;
  HttpHeaders headers;
  BodyStreamPtr body;  // never null
};

class Client {
 public:
  virtual ~Client() = default;
  virtual ClientResult<ClientResponse> Send(const ClientRequest& request) = 0;
  // Returns once the status line and headers have arrived.
  virtual ClientResult<StreamedResponse> Open(const ClientRequest& request) = 0;
};
using ClientPtr = std::unique_ptr<Client>;

// Reads a stream to its end, at most `limit` bytes (then cancels the rest): for the error
// bodies of streamed requests.
ClientResult<std::string> ReadAll(BodyStream& body, size_t limit = 1 << 20);

}  // namespace dljob::http
