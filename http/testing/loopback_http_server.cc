// See loopback_http_server.h.
#include "http/testing/loopback_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace dljob::http::testing {

bool LoopbackHttpServer::Connection::Write(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void LoopbackHttpServer::Connection::Close() { close_ = true; }

LoopbackHttpServer::LoopbackHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("loopback server: cannot listen on 127.0.0.1");
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

LoopbackHttpServer::~LoopbackHttpServer() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  for (std::thread& t : threads_) t.join();
}

std::vector<ReceivedRequest> LoopbackHttpServer::requests() const {
  MutexLock lock(mu_);
  return requests_;
}

void LoopbackHttpServer::Step() {
  MutexLock lock(mu_);
  ++steps_;
  cv_.notify_all();
}

bool LoopbackHttpServer::WaitForStep(int step) {
  MutexLock lock(mu_);
  cv_.wait(mu_, [&]() REQUIRES(mu_) { return stopping_ || steps_ >= step; });
  return !stopping_;
}

std::string LoopbackHttpServer::Answer(int status, const std::string& body,
                                       const std::string& extra) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

std::string LoopbackHttpServer::Chunk(const std::string& data) {
  std::ostringstream out;
  out << std::hex << data.size() << "\r\n" << data << "\r\n";
  return out.str();
}

void LoopbackHttpServer::AcceptLoop() {
  while (true) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    MutexLock lock(mu_);
    if (fd < 0 || stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    fds_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

namespace {

// Reads until `buf` holds "\r\n\r\n"; false on EOF or error.
bool ReadHead(int fd, std::string& buf, size_t& head_end) {
  char tmp[4096];
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void LoopbackHttpServer::Serve(int fd) {
  std::string buf;
  size_t head_end = 0;
  while (ReadHead(fd, buf, head_end)) {
    ReceivedRequest req;
    std::istringstream head(buf.substr(0, head_end));
    std::string line;
    std::getline(head, line);
    std::istringstream request_line(line);
    request_line >> req.method >> req.target;
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      size_t v = line.find_first_not_of(' ', colon + 1);
      req.headers.emplace_back(line.substr(0, colon), v == std::string::npos ? "" : line.substr(v));
    }
    buf.erase(0, head_end + 4);
    size_t length = std::strtoul(HeaderValue(req.headers, "Content-Length").c_str(), nullptr, 10);
    char tmp[4096];
    while (buf.size() < length) {
      ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) break;
      buf.append(tmp, static_cast<size_t>(n));
    }
    req.body = buf.substr(0, length);
    buf.erase(0, std::min(length, buf.size()));
    {
      MutexLock lock(mu_);
      requests_.push_back(req);
    }
    Connection conn(*this, fd);
    handler_(req, conn);
    if (conn.close_) break;
  }
  MutexLock lock(mu_);
  fds_.erase(std::find(fds_.begin(), fds_.end(), fd));
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace dljob::http::testing
