// See loopback_http_server.h.
#include "http/testing/loopback_http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <openssl/ssl.h>

namespace dljob::http::testing {
namespace {

// Reads what is there (at most `n` bytes) from the socket or its TLS session; <= 0 at the end.
long Receive(int fd, SSL* ssl, char* buf, int n) {
  return ssl ? SSL_read(ssl, buf, n) : ::recv(fd, buf, static_cast<size_t>(n), 0);
}

// Reads until `buf` holds "\r\n\r\n"; false on EOF or error.
bool ReadHead(int fd, SSL* ssl, std::string& buf, size_t& head_end) {
  char tmp[4096];
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    long n = Receive(fd, ssl, tmp, sizeof tmp);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
  }
  return true;
}

// A server context presenting `certificate` (http/tls_context.h, as HttpServer's).
std::shared_ptr<const TlsServerContext> ServerContext(const TestCertificate& certificate) {
  Result<std::shared_ptr<const TlsServerContext>> ctx =
      TlsServerContext::Make(certificate.cert_pem, certificate.key_pem);
  if (!ctx.ok()) throw std::runtime_error("loopback server: " + ctx.status().message());
  return *std::move(ctx);
}

}  // namespace

ReceivedRequest ParseReceivedHead(std::string_view head) {
  ReceivedRequest req;
  std::istringstream in{std::string(head)};
  std::string line;
  std::getline(in, line);
  std::istringstream request_line(line);
  request_line >> req.method >> req.target;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t v = line.find_first_not_of(' ', colon + 1);
    req.headers.emplace_back(line.substr(0, colon), v == std::string::npos ? "" : line.substr(v));
  }
  return req;
}

bool LoopbackHttpServer::Connection::Write(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    long n = ssl_ ? SSL_write(ssl_, bytes.data() + sent, static_cast<int>(bytes.size() - sent))
                  : ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void LoopbackHttpServer::Connection::Close() { close_ = true; }

LoopbackHttpServer::LoopbackHttpServer(Handler handler)
    : handler_(std::move(handler)), listener_([this](int fd) { Serve(fd); }) {}

LoopbackHttpServer::LoopbackHttpServer(Handler handler, const TestCertificate& certificate)
    : handler_(std::move(handler)),
      tls_(ServerContext(certificate)),
      listener_([this](int fd) { Serve(fd); }) {}

LoopbackHttpServer::~LoopbackHttpServer() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  listener_.Stop();
}

std::string LoopbackHttpServer::url() const {
  return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port());
}

std::vector<ReceivedRequest> LoopbackHttpServer::requests() const {
  MutexLock lock(mu_);
  return requests_;
}

std::vector<TlsHandshake> LoopbackHttpServer::handshakes(size_t at_least) const {
  MutexLock lock(mu_);
  cv_.wait_for(mu_, std::chrono::seconds(10),
               [&]() REQUIRES(mu_) { return handshakes_.size() >= at_least; });
  return handshakes_;
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

void LoopbackHttpServer::Serve(int fd) {
  int connection;
  {
    MutexLock lock(mu_);
    connection = ++connections_;
  }
  if (!tls_) {
    ServeRequests(fd, nullptr, connection);
    return;
  }
  std::unique_ptr<SSL, void (*)(SSL*)> ssl(SSL_new(tls_->get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  TlsHandshake handshake;
  handshake.ok = SSL_accept(ssl.get()) == 1;
  const char* name = SSL_get_servername(ssl.get(), TLSEXT_NAMETYPE_host_name);
  handshake.server_name = name ? name : "";
  {
    MutexLock lock(mu_);
    handshakes_.push_back(handshake);
  }
  cv_.notify_all();
  if (handshake.ok) ServeRequests(fd, ssl.get(), connection);
}

void LoopbackHttpServer::ServeRequests(int fd, SSL* ssl, int connection) {
  std::string buf;
  size_t head_end = 0;
  while (ReadHead(fd, ssl, buf, head_end)) {
    ReceivedRequest req = ParseReceivedHead(std::string_view(buf).substr(0, head_end));
    req.connection = connection;
    buf.erase(0, head_end + 4);
    size_t length = std::strtoul(HeaderValue(req.headers, "Content-Length").c_str(), nullptr, 10);
    char tmp[4096];
    while (buf.size() < length) {
      long n = Receive(fd, ssl, tmp, sizeof tmp);
      if (n <= 0) break;
      buf.append(tmp, static_cast<size_t>(n));
    }
    req.body = buf.substr(0, length);
    buf.erase(0, std::min(length, buf.size()));
    {
      MutexLock lock(mu_);
      requests_.push_back(req);
    }
    Connection conn(*this, fd, ssl);
    handler_(req, conn);
    if (conn.close_) break;
  }
}

}  // namespace dljob::http::testing
