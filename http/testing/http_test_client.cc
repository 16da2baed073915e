#include "http/testing/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "http/http_util.h"

namespace dljob::http::testing {

TestClient::TestClient(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  timeval timeout{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return;
  }
  fd_ = fd;
}

TestClient::~TestClient() { Close(); }

void TestClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TestClient::ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

bool TestClient::Send(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool TestClient::Fill() {
  char chunk[16384];
  ssize_t n;
  do {
    n = ::recv(fd_, chunk, sizeof chunk, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  buf_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

std::string TestClient::ReadUntil(std::string_view marker) {
  std::size_t at;
  while ((at = buf_.find(marker)) == std::string::npos) {
    if (!Fill()) return "";
  }
  std::string out = buf_.substr(0, at + marker.size());
  buf_.erase(0, at + marker.size());
  return out;
}

std::string TestClient::ReadExactly(std::size_t n) {
  while (buf_.size() < n) {
    if (!Fill()) return "";
  }
  std::string out = buf_.substr(0, n);
  buf_.erase(0, n);
  return out;
}

ClientResponse TestClient::ReadResponse() {
  ClientResponse response;
  std::string head = ReadUntil("\r\n\r\n");
  if (head.size() < 12) return response;
  int status = std::atoi(head.substr(9, 3).c_str());
  std::size_t pos = head.find("\r\n") + 2;
  while (pos < head.size() - 2) {
    std::size_t eol = head.find("\r\n", pos);
    std::string line = head.substr(pos, eol - pos);
    std::size_t colon = line.find(':');
    std::size_t value = line.find_first_not_of(' ', colon + 1);
    response.headers.emplace_back(line.substr(0, colon),
                                  value == std::string::npos ? "" : line.substr(value));
    pos = eol + 2;
  }
  if (EqualsIgnoreCase(HeaderValue(response.headers, "Transfer-Encoding"), "chunked")) {
    ChunkedDecoder decoder(1u << 30, 1024);
    while (true) {
      std::size_t consumed = 0;
      auto r = decoder.Feed(buf_, &consumed, &response.body);
      buf_.erase(0, consumed);
      if (r == ChunkedDecoder::Result::kDone) break;
      if (r != ChunkedDecoder::Result::kNeedMore || !Fill()) return response;
    }
  } else {
    std::string length = HeaderValue(response.headers, "Content-Length");
    if (!length.empty()) {
      std::size_t n = std::strtoull(length.c_str(), nullptr, 10);
      response.body = ReadExactly(n);
      if (response.body.size() != n) return response;
    }
  }
  response.status = status;
  return response;
}

bool TestClient::ReadEof() {
  if (!buf_.empty()) return false;
  char c;
  ssize_t n;
  do {
    n = ::recv(fd_, &c, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

ClientResponse Fetch(int port, std::string_view raw_request) {
  TestClient client(port);
  if (!client.connected() || !client.Send(raw_request)) return {};
  return client.ReadResponse();
}

}  // namespace dljob::http::testing
