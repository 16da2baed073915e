// See loopback_listener.h.
#include "http/testing/loopback_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace dljob::http::testing {

int BindLoopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot bind a socket to 127.0.0.1");
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

LoopbackListener::LoopbackListener(Serve serve) : serve_(std::move(serve)) {
  listen_fd_ = BindLoopback(&port_);
  if (::listen(listen_fd_, 16) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("loopback listener: cannot listen on 127.0.0.1");
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

LoopbackListener::~LoopbackListener() { Stop(); }

void LoopbackListener::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    MutexLock lock(mu_);  // no thread is added once stopping_ is set
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

bool LoopbackListener::Track(int fd) {
  MutexLock lock(mu_);
  if (stopping_) return false;
  fds_.push_back(fd);
  return true;
}

void LoopbackListener::Untrack(int fd) {
  MutexLock lock(mu_);
  auto it = std::find(fds_.begin(), fds_.end(), fd);
  if (it != fds_.end()) fds_.erase(it);
}

void LoopbackListener::AcceptLoop() {
  while (true) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    MutexLock lock(mu_);
    if (fd < 0 || stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    fds_.push_back(fd);
    threads_.emplace_back([this, fd] {
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
      serve_(fd);
      Untrack(fd);
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
    });
  }
}

}  // namespace dljob::http::testing
