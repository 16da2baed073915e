// LoopbackHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) for tests
// of HTTP clients (http/socket_client.h and what is built on it), over plain TCP or, given a
// certificate (test_pki.h), over TLS. Test-only.
//
// It parses each request (request line, headers, a Content-Length body), records it, and hands
// it to the test's handler, which writes the raw response bytes itself — so a test can send
// exactly what it wants: a plain answer, chunked pieces, a connection cut midway. Handlers may
// wait for the test with WaitForStep(n) (returns once the test has called Step() n times, or the
// server is stopping), which makes "this piece arrived before the next one was sent" checkable
// without timing. Over TLS it records each handshake: the server name the client sent (SNI) and
// whether the handshake completed. One thread per connection (loopback_listener.h); the
// destructor closes every socket and joins them. Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/types.h>

#include "base/mutex.h"
#include "http/http.h"
#include "http/testing/loopback_listener.h"
#include "http/testing/test_pki.h"
#include "http/tls_context.h"

namespace dljob::http::testing {

struct ReceivedRequest {
  std::string method;
  std::string target;  // path and query, as sent
  HttpHeaders headers;
  std::string body;
  int connection = 0;  // which connection it came on: 1 for the first the server accepted, ...
};

// The request line and header lines of `head` (up to, not including, the empty line).
ReceivedRequest ParseReceivedHead(std::string_view head);

struct TlsHandshake {
  std::string server_name;  // SNI as the client sent it; "" when it sent none
  bool ok = false;          // false: the handshake failed (say, the client refused the certificate)
};

class LoopbackHttpServer {
 public:
  class Connection {
   public:
    bool Write(const std::string& bytes);  // false once the peer is gone
    void Close();                          // ends the connection after the handler returns
    LoopbackHttpServer& server() { return server_; }

   private:
    friend class LoopbackHttpServer;
    Connection(LoopbackHttpServer& server, int fd, SSL* ssl)
        : server_(server), fd_(fd), ssl_(ssl) {}
    LoopbackHttpServer& server_;
    int fd_;
    SSL* ssl_;  // null over plain TCP
    bool close_ = false;
  };
  using Handler = std::function<void(const ReceivedRequest&, Connection&)>;

  explicit LoopbackHttpServer(Handler handler);
  // Over TLS, presenting `certificate` (throws std::runtime_error when OpenSSL refuses it).
  LoopbackHttpServer(Handler handler, const TestCertificate& certificate);
  ~LoopbackHttpServer();

  int port() const { return listener_.port(); }
  // "http://127.0.0.1:<port>", or https:// over TLS.
  std::string url() const;
  std::vector<ReceivedRequest> requests() const;
  // The handshakes so far, once there are at least `at_least` of them (or 10 s have passed: a
  // handshake the client broke off is recorded on the server's own time).
  std::vector<TlsHandshake> handshakes(size_t at_least = 0) const;

  void Step();                 // lets handlers waiting for the next step go on
  bool WaitForStep(int step);  // false when the server is stopping

  // "HTTP/1.1 <status> X\r\nContent-Length: n\r\n<extra>\r\n<body>".
  static std::string Answer(int status, const std::string& body, const std::string& extra = "");
  // One chunk of a chunked body ("" = the last chunk).
  static std::string Chunk(const std::string& data);

 private:
  void Serve(int fd);
  void ServeRequests(int fd, SSL* ssl, int connection);

  Handler handler_;
  std::shared_ptr<const TlsServerContext> tls_;  // null over plain TCP
  mutable Mutex mu_;
  mutable std::condition_variable_any cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  int steps_ GUARDED_BY(mu_) = 0;
  int connections_ GUARDED_BY(mu_) = 0;
  std::vector<ReceivedRequest> requests_ GUARDED_BY(mu_);
  std::vector<TlsHandshake> handshakes_ GUARDED_BY(mu_);
  LoopbackListener listener_;  // last: it starts serving once everything above is ready
};

}  // namespace dljob::http::testing
