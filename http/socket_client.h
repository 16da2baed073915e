// SocketClient: the production Client (client.h), HTTP/1.1 on POSIX sockets and OpenSSL.
//
// Speaks http:// and https:// to one server, the base URL. For https it trusts exactly the given
// CA bundle when there is one (the system roots otherwise), presents a client certificate and
// key for mutual TLS, and checks that the server's certificate names tls_server_name, or
// base_url's host when that is empty, unless insecure_skip_tls_verify (client_tls.h). A request's
// Host header changes none of that, and the connection always goes to base_url's host. A
// certificate that does not check out is kTransportError.
//
// Everything runs on the calling thread: Send() writes the request and reads the whole answer,
// Open() returns once the status line and headers are in and each BodyStream::Read() then reads
// the socket itself. No thread pool, no hand-offs. A request's timeout is an inactivity limit
// (each wait restarts it), so a watch may stream for as long as events keep arriving; its
// total_timeout bounds the whole exchange of Send(), and Open() up to the headers. Cancel() shuts
// the socket down, so a Read() blocked on another thread returns kCancelled at once; dropping a
// BodyStream cancels it. BodyStream::TryRead() reads what has arrived without waiting and
// otherwise names the socket to poll and the time the inactivity limit runs out, so one thread
// can follow many streams. Redirects are not followed; 1xx answers are skipped.
//
// Connections are kept alive and reused, most recently used first (up to 64 idle ones, none
// idle for more than 90 s, as Go's transport keeps them). A connection goes back to the pool
// only when its answer was read to its end by its framing; an idle one the server closed is
// noticed before reuse and dropped. If a reused connection turns out closed before any byte of
// the answer arrived, a GET, HEAD or OPTIONS goes again once on a new connection (Go's rule:
// other methods may have been acted on), and so does any request whose sending failed. A
// streamed body that is read to its end returns its connection too. A new connection tries the
// host's addresses in turn, each with its share of the timeout (at least 2 s), as Go's dialer.
//
// Through an HTTP proxy (proxy_url), http:// requests go to the proxy in absolute form
// ("GET http://host:port/path HTTP/1.1") and https:// ones through a CONNECT tunnel, TLS running
// end to end between this client and the server; streamed requests (Open) go the same ways.
// Proxy credentials from the URL's userinfo go as "Proxy-Authorization: Basic" on every CONNECT
// and every absolute-form request. A proxy that cannot be reached, or that refuses a CONNECT
// (407 for bad credentials, 403, 502...), is kConnectFailed naming the proxy: the request never
// reached the server. Through a plain-HTTP proxy its refusals are ordinary responses (a 407).
//
// Every failure is a ClientError naming the request: "<METHOD> <url>[ via proxy <proxy>]:
// <what happened>".
//
// Thread-safety: Send() and Open() may be called from many threads at once; each exchange has a
// connection to itself. A BodyStream belongs to one reader; Cancel() is safe from any thread.
#pragma once

#include <memory>

#include "base/status.h"
#include "http/client.h"

namespace dljob::http {

struct SocketClientState;

class SocketClient final : public Client {
 public:
  // Checks the base URL, the PEM data (CA, client certificate, matching key), the TLS server
  // name and the proxy URL up front, so a bad setting is reported here (kInvalidArgument, naming
  // what is wrong) rather than on the first request.
  static Result<std::unique_ptr<SocketClient>> Create(const ClientOptions& options);
  ~SocketClient() override;

  ClientResult<ClientResponse> Send(const ClientRequest& request) override;
  ClientResult<StreamedResponse> Open(const ClientRequest& request) override;

 private:
  explicit SocketClient(std::shared_ptr<SocketClientState> impl);
  std::shared_ptr<SocketClientState> impl_;  // shared with open streams: they give back connections
};

}  // namespace dljob::http
