// ClientConnection: one connection of SocketClient (socket_client.h) to its server; internal to
// that client.
//
// Open() resolves the host, connects (to the proxy when there is one, and through it: a CONNECT
// tunnel when TLS follows), and runs the TLS handshake when given a context: SNI and the name
// check are the context's (client_tls.h). Every wait is a poll() on the non-blocking socket,
// bounded by a Deadline, so nothing blocks past the caller's limits; the socket has TCP_NODELAY
// (a request is one write, and waits for no ACK) and TCP keepalive (SetKeepAlive). Writes never
// raise SIGPIPE.
//
// Errors come back as ClientError whose message says what happened ("connect to 10.0.0.1:6443:
// Connection refused"); the caller puts the request in front.
//
// Thread-safety: one thread at a time reads and writes. Shutdown() may be called from any thread
// while the connection is alive: a blocked read or write then returns at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http/client.h"

typedef struct ssl_st SSL;

namespace dljob::http {

class ClientTlsContext;

// TCP keepalive on every connection, as Go's dialer sets it for client-go: a watch or a followed
// log that goes quiet keeps its connection through middleboxes that drop idle ones, and a peer
// gone without a word (its host lost, a path cut) is found after about a minute (idle, then
// probes apart) instead of when the request's inactivity limit runs out.
inline constexpr std::chrono::seconds kKeepAliveIdle{30};
inline constexpr std::chrono::seconds kKeepAliveInterval{10};
inline constexpr int kKeepAliveProbes = 3;
void SetKeepAlive(int fd);

// How long an operation may wait: `idle` with nothing moving, and never past `until`.
struct Deadline {
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds idle{30'000};
  Clock::time_point until = Clock::time_point::max();
  std::chrono::milliseconds total{0};  // what `until` was set from, for the message

  // A deadline with no total limit.
  static Deadline Idle(std::chrono::milliseconds idle) { return {idle}; }
  // `idle`, and at most `total` from now when total is positive.
  static Deadline Of(std::chrono::milliseconds idle, std::chrono::milliseconds total);
};

// How long one of `remaining` addresses of a host may take to connect when all of them must by
// `until` (Go's dialer rule): an equal share of the time left, but at least 2 s, or all that is
// left when that is less. So an address that swallows packets leaves time for the next one.
Deadline::Clock::time_point AddressDeadline(Deadline::Clock::time_point now,
                                            Deadline::Clock::time_point until, int remaining);

// Where a connection goes.
struct Route {
  std::string host;  // the server's host (an IPv6 address without brackets)
  int port = 0;
  // The proxy to connect to instead, when proxy_host is not empty; with TLS, a CONNECT to
  // host:port through it (sending proxy_authorization as Proxy-Authorization when not empty).
  std::string proxy_host;
  int proxy_port = 0;
  std::string proxy_authorization;
};

class ClientConnection {
 public:
  // Connects along `route`; TLS when `tls` is not null. kConnectFailed when the server (or the
  // proxy, or the proxy's CONNECT) could not be reached, kTimeout when the deadline passed,
  // kTransportError for a failed handshake (a certificate that does not check out).
  static ClientResult<std::unique_ptr<ClientConnection>> Open(const Route& route,
                                                              ClientTlsContext* tls,
                                                              const Deadline& deadline);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  std::optional<ClientError> WriteAll(std::string_view data, const Deadline& deadline);

  // Reads what has arrived (at least one byte, waiting for it) onto the end of buffer(); 0 when
  // the peer closed the connection.
  ClientResult<size_t> Fill(const Deadline& deadline);
  // Fill without waiting: std::nullopt when nothing has arrived yet — poll fd() for `*want`
  // (POLLIN, or POLLOUT for TLS that must write first) before trying again.
  ClientResult<std::optional<size_t>> TryFill(short* want);
  int fd() const { return fd_; }
  // Bytes received and not yet consumed; consumers erase from the front.
  std::string& buffer() { return buf_; }

  // Reads a message head up to the empty line that ends it, removing it from buffer() and
  // returning it without that empty line. kTransportError when the peer closes first or the
  // head passes `limit` bytes.
  ClientResult<std::string> ReadHead(const Deadline& deadline, size_t limit = 1 << 20);

  // Bytes received so far on this connection, after its setup (proxy and TLS handshake): a
  // kept-alive connection that the server closed before answering receives none for the request.
  size_t received() const { return received_; }

  // For a connection about to be reused: true while nothing has arrived unasked (no close, no
  // stray bytes) and the connection is not broken.
  bool Reusable();

  // shutdown(2): a blocked read or write, on whatever thread, returns at once.
  void Shutdown();

 private:
  ClientConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  std::optional<ClientError> StartTls(ClientTlsContext& tls, const Deadline& deadline);
  std::optional<ClientError> Tunnel(const Route& route, const Deadline& deadline);
  // One recv() or SSL_read() into `into`: the bytes read, 0 at the peer's close, -1 when nothing
  // is there yet (wait for `*want`: POLLIN, or POLLOUT for TLS that must write first).
  ClientResult<ssize_t> ReadOnce(char* into, size_t size, short* want);
  // Waits for the socket to become readable (`events` POLLIN) or writable (POLLOUT).
  std::optional<ClientError> Wait(short events, const Deadline& deadline,
                                  Deadline::Clock::time_point idle_until);

  const int fd_;
  const std::string peer_;  // "host:port" as connected, for messages
  SSL* ssl_ = nullptr;      // null for plain HTTP
  std::string buf_;
  size_t received_ = 0;
  bool broken_ = false;  // a failed read or write, or the peer closed
};

}  // namespace dljob::http
