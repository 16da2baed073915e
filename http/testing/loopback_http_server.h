// LoopbackHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) for tests
// of HTTP clients (http/cpprest_client.h and what is built on it). Test-only.
//
// It parses each request (request line, headers, a Content-Length body), records it, and hands
// it to the test's handler, which writes the raw response bytes itself — so a test can send
// exactly what it wants: a plain answer, chunked pieces, a connection cut midway. Handlers may
// wait for the test with WaitForStep(n) (returns once the test has called Step() n times, or the
// server is stopping), which makes "this piece arrived before the next one was sent" checkable
// without timing. One thread per connection; the destructor closes every socket and joins them.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "http/http.h"

namespace dljob::http::testing {

struct ReceivedRequest {
  std::string method;
  std::string target;  // path and query, as sent
  HttpHeaders headers;
  std::string body;
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
    Connection(LoopbackHttpServer& server, int fd) : server_(server), fd_(fd) {}
    LoopbackHttpServer& server_;
    int fd_;
    bool close_ = false;
  };
  using Handler = std::function<void(const ReceivedRequest&, Connection&)>;

  explicit LoopbackHttpServer(Handler handler);
  ~LoopbackHttpServer();

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<ReceivedRequest> requests() const;

  void Step();                 // lets handlers waiting for the next step go on
  bool WaitForStep(int step);  // false when the server is stopping

  // "HTTP/1.1 <status> X\r\nContent-Length: n\r\n<extra>\r\n<body>".
  static std::string Answer(int status, const std::string& body, const std::string& extra = "");
  // One chunk of a chunked body ("" = the last chunk).
  static std::string Chunk(const std::string& data);

 private:
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  mutable Mutex mu_;
  std::condition_variable_any cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  int steps_ GUARDED_BY(mu_) = 0;
  std::vector<ReceivedRequest> requests_ GUARDED_BY(mu_);
  std::vector<int> fds_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace dljob::http::testing
