#include "http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/errno_status.h"

namespace dljob::http {
namespace {

std::string FormatAddress(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
  ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
  port = ntohs(a->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

}  // namespace

HttpServer::HttpServer(Handler handler, HttpServerOptions options)
    : handler_(std::move(handler)), options_(std::move(options)) {}

HttpServer::~HttpServer() {
  Stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_.wake_fd >= 0) ::close(stop_.wake_fd);
  if (wake_write_fd_ >= 0) ::close(wake_write_fd_);
}

Status HttpServer::Start() {
  std::string where = options_.host + " port " + std::to_string(options_.port);
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (::inet_pton(AF_INET, options_.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(options_.port));
    addr_len = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, options_.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(options_.port));
    addr_len = sizeof(sockaddr_in6);
  } else {
    return Status::InvalidArgument("listen address \"" + options_.host +
                                   "\" is not a numeric IPv4 or IPv6 address");
  }
  if (options_.port < 0 || options_.port > 65535) {
    return Status::InvalidArgument("port " + std::to_string(options_.port) +
                                   " is outside 0..65535");
  }
  if (options_.tls) {
    Result<std::shared_ptr<const TlsServerContext>> tls =
        TlsServerContext::Make(options_.tls->cert_pem, options_.tls->key_pem);
    if (!tls.ok()) return tls.status().WithContext("HTTPS on " + where);
    tls_ = *std::move(tls);
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe", "");
  stop_.wake_fd = pipe_fds[0];
  wake_write_fd_ = pipe_fds[1];

  listen_fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return ErrnoStatus("socket for " + where, "");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0) {
    return ErrnoStatus("cannot listen on " + where, "");
  }
  if (::listen(listen_fd_, 128) != 0) return ErrnoStatus("listen on " + where, "");
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0) {
    return ErrnoStatus("getsockname", "");
  }
  port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                           : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void HttpServer::AcceptLoop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_.wake_fd, POLLIN, 0}};
  while (!stop_.stopped.load()) {
    ReapFinished();
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[1].revents != 0) return;
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_CLOEXEC);
    if (fd < 0) continue;  // the client gave up already, or out of descriptors for a moment
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    MutexLock lock(mutex_);
    Slot& slot = slots_.emplace_back();
    slot.connection = std::make_unique<Connection>(
        fd, FormatAddress(peer), handler_, options_.limits, stop_, tls_ ? tls_->get() : nullptr);
    slot.thread = std::thread([this, &slot] {
      // OpenSSL writes with write(2): a client gone mid-response must fail the write (EPIPE),
      // not kill the process.
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
      slot.connection->Serve();
      MutexLock done_lock(mutex_);
      slot.done = true;
    });
  }
}

void HttpServer::ReapFinished() {
  std::list<Slot> finished;
  {
    MutexLock lock(mutex_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), slots_, it);
      it = next;
    }
  }
  for (Slot& slot : finished) slot.thread.join();
}

void HttpServer::Stop() {
  MutexLock stop_lock(stop_mutex_);
  if (stop_.stopped.exchange(true)) return;
  if (wake_write_fd_ >= 0) {
    char byte = 1;
    while (::write(wake_write_fd_, &byte, 1) < 0 && errno == EINTR) {
    }
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
  std::list<Slot> all;
  {
    MutexLock lock(mutex_);
    for (Slot& slot : slots_) slot.connection->Shutdown();
    all.splice(all.end(), slots_);
  }
  for (Slot& slot : all) slot.thread.join();
}

}  // namespace dljob::http
