// A raw HTTP/1.1 client over one loopback TCP connection, for http_server_test: it sends exactly
// the bytes a test gives it and reads responses piece by piece, so tests can check framing,
// keep-alive and streaming on the wire. Reads give up after 30 s (a broken server fails the test
// instead of hanging it). Not thread-safe: one thread per client.
#pragma once

#include <string>
#include <string_view>

#include "http/http.h"

namespace dljob::http::testing {

struct ClientResponse {
  int status = 0;  // 0: the connection closed before a full response
  HttpHeaders headers;
  std::string body;  // de-chunked
};

class TestClient {
 public:
  explicit TestClient(int port);  // connects to 127.0.0.1:port; connected() tells
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool Send(std::string_view data);
  void ShutdownWrite();
  void Close();

  // Reads until the received bytes contain `marker`; returns them up to and including it and
  // keeps the rest. "" if the connection closed first.
  std::string ReadUntil(std::string_view marker);
  // Reads exactly n bytes ("" if the connection closed first).
  std::string ReadExactly(std::size_t n);
  // Reads one response (head and body by its framing).
  ClientResponse ReadResponse();
  // Whether the server closed the connection: reads until EOF, false if data arrived instead.
  bool ReadEof();

 private:
  bool Fill();
  int fd_ = -1;
  std::string buf_;
};

// Sends one request on a fresh connection and reads the response.
ClientResponse Fetch(int port, std::string_view raw_request);

}  // namespace dljob::http::testing
