// See client_connection.h.
#include "http/client_connection.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "http/client_tls.h"
#include "http/http_util.h"
#include "http/url.h"

namespace dljob::http {
namespace {

using Clock = Deadline::Clock;

std::string Errno(int error) { return std::strerror(error); }

std::string SslReason() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "TLS failure";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

// A connect-phase failure: the request never left this process, unless the total limit ran out.
ClientError NotConnected(ClientError e) {
  if (e.failure != Failure::kTimeout || e.message.find("total timeout") == std::string::npos) {
    e.failure = Failure::kConnectFailed;
  }
  return e;
}

}  // namespace

Clock::time_point AddressDeadline(Clock::time_point now, Clock::time_point until, int remaining) {
  if (until <= now) return until;
  constexpr auto kSaneMinimum = std::chrono::seconds(2);
  const Clock::duration left = until - now;
  const Clock::duration share = left / std::max(remaining, 1);
  if (share >= kSaneMinimum) return now + share;
  return left < kSaneMinimum ? until : now + kSaneMinimum;
}

Deadline Deadline::Of(std::chrono::milliseconds idle, std::chrono::milliseconds total) {
  Deadline d{idle};
  if (total > std::chrono::milliseconds::zero()) {
    d.until = Clock::now() + total;
    d.total = total;
  }
  return d;
}

void SetKeepAlive(int fd) {
  const int on = 1, idle = static_cast<int>(kKeepAliveIdle.count()),
            interval = static_cast<int>(kKeepAliveInterval.count()), probes = kKeepAliveProbes;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

ClientResult<std::unique_ptr<ClientConnection>> ClientConnection::Open(const Route& route,
                                                                       ClientTlsContext* tls,
                                                                       const Deadline& deadline) {
  const bool via_proxy = !route.proxy_host.empty();
  const std::string& host = via_proxy ? route.proxy_host : route.host;
  const int port = via_proxy ? route.proxy_port : route.port;
  const std::string peer = JoinHostPort(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return ClientError{Failure::kConnectFailed, "resolve " + host + ": " + ::gai_strerror(rc)};
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  std::optional<ClientError> last;
  std::unique_ptr<ClientConnection> conn;
  int remaining = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) ++remaining;
  // Every address within the idle limit (and the total one), each with its share of it.
  const Clock::time_point connect_until = std::min(Clock::now() + deadline.idle, deadline.until);
  for (addrinfo* a = found; a != nullptr && !conn; a = a->ai_next, --remaining) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = ClientError{Failure::kConnectFailed, "connect to " + peer + ": " + Errno(errno)};
      continue;
    }
    std::unique_ptr<ClientConnection> c(new ClientConnection(fd, peer));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last = ClientError{Failure::kConnectFailed, "connect to " + peer + ": " + Errno(errno)};
        continue;
      }
      const Clock::time_point mine = AddressDeadline(Clock::now(), connect_until, remaining);
      if (auto e = c->Wait(POLLOUT, deadline, mine)) {
        if (e->failure == Failure::kTimeout && mine < deadline.until) e->message = "timed out";
        last = NotConnected(ClientError{e->failure, "connect to " + peer + ": " + e->message});
        continue;
      }
      int error = 0;
      socklen_t len = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
      if (error != 0) {
        last = ClientError{Failure::kConnectFailed, "connect to " + peer + ": " + Errno(error)};
        continue;
      }
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    SetKeepAlive(fd);
    conn = std::move(c);
  }
  if (!conn) return *last;
  if (via_proxy && tls != nullptr) {
    if (auto e = conn->Tunnel(route, deadline)) return *e;
  }
  if (tls != nullptr) {
    if (auto e = conn->StartTls(*tls, deadline)) return *e;
  }
  conn->received_ = 0;  // what the proxy said is not an answer to a request
  return conn;
}

ClientConnection::~ClientConnection() {
  if (ssl_ != nullptr) {
    if (!broken_) SSL_shutdown(ssl_);  // close_notify, if the socket takes it now; never waits
    SSL_free(ssl_);
    ERR_clear_error();
  }
  ::close(fd_);
}

std::optional<ClientError> ClientConnection::Tunnel(const Route& route, const Deadline& deadline) {
  const std::string authority = JoinHostPort(route.host, route.port);
  std::string connect = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (!route.proxy_authorization.empty()) {
    connect += "Proxy-Authorization: " + route.proxy_authorization + "\r\n";
  }
  connect += "\r\n";
  auto failed = [&](const ClientError& e) {
    return NotConnected(ClientError{e.failure, "CONNECT " + authority + ": " + e.message});
  };
  if (auto e = WriteAll(connect, deadline)) return failed(*e);
  ClientResult<std::string> head = ReadHead(deadline, 64 * 1024);
  if (!head.ok()) return failed(head.error());
  ResponseHead parsed;
  if (auto bad = ParseResponseHead(*head, &parsed)) {
    return ClientError{Failure::kConnectFailed, "CONNECT " + authority + ": the proxy's " + *bad};
  }
  if (parsed.status / 100 != 2) {
    std::string line = head->substr(0, head->find("\r\n"));
    return ClientError{Failure::kConnectFailed,
                       "the proxy refused CONNECT " + authority + ": " + line.substr(9)};
  }
  buf_.clear();  // a proxy says nothing more before the tunnel's first byte
  return std::nullopt;
}

std::optional<ClientError> ClientConnection::StartTls(ClientTlsContext& tls,
                                                      const Deadline& deadline) {
  ssl_ = tls.Attach(fd_);
  if (ssl_ == nullptr) return ClientError{Failure::kTransportError, "TLS: " + SslReason()};
  Clock::time_point idle_until = Clock::now() + deadline.idle;
  while (true) {
    ERR_clear_error();
    int rc = SSL_do_handshake(ssl_);
    if (rc == 1) return std::nullopt;
    int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      if (auto e = Wait(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, idle_until)) {
        e->message = "TLS handshake with " + peer_ + ": " + e->message;
        return e;
      }
      continue;
    }
    broken_ = true;
    std::string why;
    if (long verdict = SSL_get_verify_result(ssl_); verdict != X509_V_OK) {
      why = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verdict);
      ERR_clear_error();
    } else if (error == SSL_ERROR_SYSCALL || error == SSL_ERROR_ZERO_RETURN) {
      why = errno != 0 ? Errno(errno) : "the server closed the connection";
      ERR_clear_error();
    } else {
      why = SslReason();
    }
    return ClientError{Failure::kTransportError, "TLS handshake with " + peer_ + ": " + why};
  }
}

std::optional<ClientError> ClientConnection::Wait(short events, const Deadline& deadline,
                                                  Clock::time_point idle_until) {
  while (true) {
    Clock::time_point now = Clock::now();
    Clock::time_point limit = std::min(idle_until, deadline.until);
    if (now >= limit) {
      broken_ = true;
      if (deadline.until <= idle_until) {
        return ClientError{Failure::kTimeout, "no answer within its total timeout of " +
                                                  std::to_string(deadline.total.count()) + " ms"};
      }
      return ClientError{Failure::kTimeout,
                         "nothing arrived for " + std::to_string(deadline.idle.count()) + " ms"};
    }
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(limit - now);
    pollfd p{fd_, events, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(wait.count(), 60'000)));
    if (rc > 0) return std::nullopt;  // ready, or an error the next call reports
    if (rc < 0 && errno != EINTR) {
      broken_ = true;
      return ClientError{Failure::kTransportError, "poll: " + Errno(errno)};
    }
  }
}

std::optional<ClientError> ClientConnection::WriteAll(std::string_view data,
                                                      const Deadline& deadline) {
  Clock::time_point idle_until = Clock::now() + deadline.idle;
  while (!data.empty()) {
    ssize_t n;
    short want = POLLOUT;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      int rc =
          SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30)));
      n = rc;
      if (rc <= 0) {
        int error = SSL_get_error(ssl_, rc);
        if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
          broken_ = true;
          std::string why = error == SSL_ERROR_SYSCALL && errno != 0 ? Errno(errno) : SslReason();
          return ClientError{Failure::kTransportError, "send to " + peer_ + ": " + why};
        }
        want = error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      }
    } else {
      n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        broken_ = true;
        return ClientError{Failure::kTransportError, "send to " + peer_ + ": " + Errno(errno)};
      }
    }
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      idle_until = Clock::now() + deadline.idle;
      continue;
    }
    if (auto e = Wait(want, deadline, idle_until)) return e;
  }
  return std::nullopt;
}

ClientResult<ssize_t> ClientConnection::ReadOnce(char* into, size_t size, short* want) {
  *want = POLLIN;
  if (ssl_ == nullptr) {
    ssize_t n = ::recv(fd_, into, size, 0);
    if (n >= 0) return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return ssize_t{-1};
    broken_ = true;
    return ClientError{Failure::kTransportError, "read from " + peer_ + ": " + Errno(errno)};
  }
  ERR_clear_error();
  int rc = SSL_read(ssl_, into, static_cast<int>(size));
  if (rc > 0) return ssize_t{rc};
  int error = SSL_get_error(ssl_, rc);
  if (error == SSL_ERROR_ZERO_RETURN) return ssize_t{0};  // close_notify, or a plain close
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    *want = error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    return ssize_t{-1};
  }
  broken_ = true;
  std::string why = error == SSL_ERROR_SYSCALL && errno != 0 ? Errno(errno) : SslReason();
  return ClientError{Failure::kTransportError, "read from " + peer_ + ": " + why};
}

ClientResult<size_t> ClientConnection::Fill(const Deadline& deadline) {
  Clock::time_point idle_until = Clock::now() + deadline.idle;
  while (true) {
    short want = POLLIN;
    ClientResult<std::optional<size_t>> n = TryFill(&want);
    if (!n.ok()) return n.error();
    if (*n) return **n;
    if (auto e = Wait(want, deadline, idle_until)) return *e;
  }
}

ClientResult<std::optional<size_t>> ClientConnection::TryFill(short* want) {
  // A small buffer on the stack: a thread that follows a log for hours keeps whatever stack it
  // has touched, so a reader costs 4 KiB here, not the 64 KiB it may take in one call.
  char chunk[4096];
  ClientResult<ssize_t> n = ReadOnce(chunk, sizeof chunk, want);
  if (!n.ok()) return n.error();
  if (*n < 0) return std::optional<size_t>();
  if (*n == 0) {
    broken_ = true;  // closed: nothing more comes on this connection
    return std::optional<size_t>(0);
  }
  size_t total = 0;
  short more = POLLIN;
  do {  // and what else has arrived, without waiting, up to 64 KiB
    buf_.append(chunk, static_cast<size_t>(*n));
    total += static_cast<size_t>(*n);
    if (total >= 64 * 1024) break;
    n = ReadOnce(chunk, sizeof chunk, &more);
  } while (n.ok() && *n > 0);  // an end or error now is reported by the next call
  received_ += total;
  return std::optional<size_t>(total);
}

ClientResult<std::string> ClientConnection::ReadHead(const Deadline& deadline, size_t limit) {
  size_t scanned = 0;
  while (true) {
    size_t end = buf_.find("\r\n\r\n", scanned);
    if (end != std::string::npos) {
      std::string head = buf_.substr(0, end + 2);
      buf_.erase(0, end + 4);
      return head;
    }
    if (buf_.size() > limit) {
      broken_ = true;
      return ClientError{Failure::kTransportError,
                         "the answer's head is over " + std::to_string(limit) + " bytes"};
    }
    scanned = buf_.size() < 3 ? 0 : buf_.size() - 3;
    ClientResult<size_t> n = Fill(deadline);
    if (!n.ok()) return n.error();
    if (*n == 0) {
      return ClientError{Failure::kTransportError,
                         peer_ + " closed the connection before the answer's head"};
    }
  }
}

bool ClientConnection::Reusable() {
  if (broken_ || !buf_.empty()) return false;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return false;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // readable: closed, or bytes nobody asked for
}

void ClientConnection::Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace dljob::http
