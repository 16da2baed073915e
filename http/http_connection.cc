#include "http/http_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace dljob::http {
namespace {

// A misused ResponseWriter is a bug in the handler: fail loudly.
[[noreturn]] void Misuse(const char* what) {
  std::fprintf(stderr, "http_connection: handler bug: %s\n", what);
  std::abort();
}

bool HasBody(int status) { return status >= 200 && status != 204 && status != 304; }

}  // namespace

Connection::Connection(int fd, std::string remote, const Handler& handler, const HttpLimits& limits,
                       const StopSignal& stop, SSL_CTX* tls)
    : fd_(fd),
      tls_(tls),
      remote_(std::move(remote)),
      handler_(handler),
      limits_(limits),
      stop_(stop) {}

Connection::~Connection() {
  Close();
  SSL_free(ssl_);
}

void Connection::Shutdown() {
  MutexLock lock(fd_mutex_);
  if (!closed_) ::shutdown(fd_, SHUT_RDWR);
}

void Connection::Close() {
  MutexLock lock(fd_mutex_);
  if (!closed_) ::close(fd_);
  closed_ = true;
}

bool Connection::Handshake() {
  ssl_ = SSL_new(tls_);
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return false;
  // Bounded: a client that connects and says nothing must not hold the thread until Stop().
  timeval limit{10, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  bool ok = SSL_accept(ssl_) == 1;
  timeval none{0, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  ERR_clear_error();
  return ok;
}

bool Connection::Fill() {
  pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_.wake_fd, POLLIN, 0}};
  // Bytes the TLS session has decrypted already are not visible to poll().
  while (!(ssl_ && SSL_pending(ssl_) > 0)) {
    if (stop_.stopped.load()) return false;
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[1].revents != 0) return false;
    break;
  }
  char chunk[16384];
  ssize_t n;
  if (ssl_) {
    n = SSL_read(ssl_, chunk, sizeof chunk);
    if (n <= 0) ERR_clear_error();
  } else {
    do {
      n = ::recv(fd_, chunk, sizeof chunk, 0);
    } while (n < 0 && errno == EINTR);
  }
  if (n <= 0) return false;
  buf_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

bool Connection::SendAll(std::string_view data) {
  while (!data.empty() && !broken_) {
    ssize_t n;
    if (ssl_) {
      n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
      if (n <= 0) ERR_clear_error();
    } else {
      n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
    }
    if (n <= 0 || stop_.stopped.load()) {
      broken_ = true;
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return !broken_;
}

Connection::Read Connection::ReadHead(std::string* head) {
  std::size_t scanned = 0;
  while (true) {
    // Tolerate the empty lines some clients send between requests.
    std::size_t skip = 0;
    while (skip < buf_.size() && (buf_[skip] == '\r' || buf_[skip] == '\n')) ++skip;
    if (skip > 0) buf_.erase(0, skip), scanned = 0;
    std::size_t end = buf_.find("\r\n\r\n", scanned);
    if (end != std::string::npos) {
      if (end > limits_.max_header_bytes) return Read::kTooLarge;
      head->assign(buf_, 0, end);
      buf_.erase(0, end + 4);
      return Read::kOk;
    }
    if (buf_.size() > limits_.max_header_bytes) return Read::kTooLarge;
    scanned = buf_.size() < 3 ? 0 : buf_.size() - 3;
    if (!Fill()) return Read::kClosed;
  }
}

bool Connection::ReadBody(const RequestHead& head, HttpRequest* request) {
  bool expects_body = head.chunked || head.content_length > 0;
  if (!head.chunked && head.content_length > limits_.max_body_bytes) {
    RefuseAndClose(
        413, "request body is larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
    return false;
  }
  if (head.expect_continue && expects_body && buf_.empty() &&
      !SendAll("HTTP/1.1 100 Continue\r\n\r\n")) {
    return false;
  }
  if (!head.chunked) {
    while (buf_.size() < head.content_length) {
      if (!Fill()) return false;
    }
    request->body.assign(buf_, 0, head.content_length);
    buf_.erase(0, head.content_length);
    return true;
  }
  ChunkedDecoder decoder(limits_.max_body_bytes, limits_.max_header_bytes);
  while (true) {
    std::size_t consumed = 0;
    ChunkedDecoder::Result r = decoder.Feed(buf_, &consumed, &request->body);
    buf_.erase(0, consumed);
    switch (r) {
      case ChunkedDecoder::Result::kDone:
        return true;
      case ChunkedDecoder::Result::kMalformed:
        RefuseAndClose(400, "malformed chunked request body");
        return false;
      case ChunkedDecoder::Result::kTooLarge:
        RefuseAndClose(413, "request body is larger than " +
                                std::to_string(limits_.max_body_bytes) + " bytes");
        return false;
      case ChunkedDecoder::Result::kNeedMore:
        if (!Fill()) return false;
        break;
    }
  }
}

void Connection::Serve() {
  if (tls_ && !Handshake()) return Close();
  ServeRequests();
  LingeringClose();
  Close();
}

void Connection::ServeRequests() {
  while (!stop_.stopped.load()) {
    std::string head_text;
    Read r = ReadHead(&head_text);
    if (r == Read::kClosed) return;
    if (r == Read::kTooLarge) {
      return RefuseAndClose(431, "request headers are larger than " +
                                     std::to_string(limits_.max_header_bytes) + " bytes");
    }
    RequestHead head;
    if (std::optional<HttpError> err = ParseRequestHead(head_text, &head)) {
      return RefuseAndClose(err->status, err->message);
    }
    HttpRequest request = std::move(head.request);
    if (!ReadBody(head, &request)) return;
    request.remote = remote_;
    reply_ = Reply::kNone;
    head_only_ = request.method == "HEAD";
    keep_alive_ = head.keep_alive;
    raw_stream_ = head.http10;
    try {
      handler_(request, *this);
    } catch (const std::exception& e) {
      if (reply_ != Reply::kNone) return;  // a half-sent response cannot be completed
      Respond(500, {{"Content-Type", "text/plain"}}, std::string("handler failed: ") + e.what());
    }
    if (reply_ == Reply::kNone) {
      Respond(500, {{"Content-Type", "text/plain"}}, "handler sent no response");
    }
    if (reply_ == Reply::kStream && !raw_stream_ && !head_only_) SendAll("0\r\n\r\n");
    if (broken_ || !keep_alive_) return;
  }
}

void Connection::Respond(int status, const HttpHeaders& headers, std::string_view body) {
  if (reply_ != Reply::kNone) Misuse("Respond after a response was started");
  reply_ = Reply::kWhole;
  if (stop_.stopped.load()) keep_alive_ = false;
  std::string framing = HasBody(status) ? "Content-Length: " + std::to_string(body.size()) : "";
  std::string out = FormatResponseHead(status, headers, framing, keep_alive_);
  if (!head_only_ && HasBody(status)) out.append(body);
  SendAll(out);
}

void Connection::StartStream(int status, const HttpHeaders& headers) {
  if (reply_ != Reply::kNone) Misuse("StartStream after a response was started");
  reply_ = Reply::kStream;
  if (raw_stream_) keep_alive_ = false;  // HTTP/1.0 has no chunking: the close ends the body
  std::string framing = raw_stream_ ? "" : "Transfer-Encoding: chunked";
  SendAll(FormatResponseHead(status, headers, framing, keep_alive_));
}

bool Connection::Write(std::string_view data) {
  if (reply_ != Reply::kStream) Misuse("Write without StartStream");
  // Check first: a send to a peer that has just closed still succeeds once.
  if (!Connected()) return false;
  if (data.empty() || head_only_) return true;
  return SendAll(raw_stream_ ? std::string(data) : FormatChunk(data));
}

bool Connection::Connected() {
  if (broken_ || stop_.stopped.load()) return false;
  if (ssl_ && SSL_pending(ssl_) > 0) return true;  // the next request, already decrypted
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return errno == EINTR;
  if (p.revents & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL)) return false;
  if (p.revents & POLLIN) {
    // Readable: either the client pipelined its next request (still there) or EOF (gone).
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return false;
    }
  }
  return true;
}

void Connection::RefuseAndClose(int status, const std::string& message) {
  head_only_ = false;
  keep_alive_ = false;
  reply_ = Reply::kNone;
  Respond(status, {{"Content-Type", "text/plain"}}, message + "\n");
}

// Closing with unread input makes the kernel send a reset, which can destroy the error response
// before the client reads it. So: stop writing, then read and drop what the client still sends
// (bounded by bytes, time and the stop signal) before the socket is closed.
void Connection::LingeringClose() {
  if (ssl_ && !broken_) {
    SSL_shutdown(ssl_);  // close_notify: the client can tell the end from a cut
    ERR_clear_error();
  }
  ::shutdown(fd_, SHUT_WR);
  std::size_t dropped = 0;
  pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_.wake_fd, POLLIN, 0}};
  while (dropped < (1u << 20) && ::poll(fds, 2, 1000) > 0 && fds[1].revents == 0) {
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    dropped += static_cast<std::size_t>(n);
  }
}

}  // namespace dljob::http
