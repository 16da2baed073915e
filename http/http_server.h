// HttpServer: a small HTTP/1.1 server on POSIX sockets with a thread per
// connection (watches hold their connection for minutes, so a pool would only add limits).
//
// It listens on a loopback address, reads requests (Content-Length and chunked bodies,
// "Expect: 100-continue", keep-alive and pipelining), hands each to the Handler (http.h) on the
// connection's thread, and sends the answer with Content-Length or, for streams, chunked
// transfer encoding, one chunk per Write, flushed at once (TCP_NODELAY). Requests it cannot
// parse are refused before the handler sees them: 400 malformed, 413 body too large, 431 head
// too large, 501 unknown transfer coding, 505 other HTTP versions; the connection is closed.
//
// HTTPS: given a certificate and key (options.tls), every connection speaks TLS (1.2 or later)
// and nothing else; Start() refuses a certificate and key that do not belong together.
//
// Stopping: Stop() closes the listening socket, wakes every connection blocked reading or
// writing, and joins all threads. A handler blocked on something of its own (a watch waiting
// for events) is not interrupted: handlers that stream MUST poll ResponseWriter::Connected()
// (false once the server is stopping or the client has gone) at least every few hundred
// milliseconds and return when it is false; Stop() waits for them.
//
// Thread-safety: Start(), Stop() and port() may be called from any thread; the handler runs
// concurrently on many threads and must be thread-safe itself.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "http/http.h"
#include "http/http_connection.h"
#include "http/pki.h"
#include "http/tls_context.h"

namespace dljob::http {

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // a numeric address: "127.0.0.1", "::1"
  int port = 0;                    // 0: the kernel picks a free port; port() tells which
  HttpLimits limits;
  // Serve HTTPS with this certificate (PEM, the server's first, then any intermediates) and key.
  std::optional<CertificateAndKey> tls;
};

class HttpServer {
 public:
  HttpServer(Handler handler, HttpServerOptions options);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts accepting. An error names the address and the system's reason.
  // REQUIRES: called once.
  Status Start();
  // The bound port. REQUIRES: Start() succeeded.
  int port() const { return port_; }
  // Idempotent. Returns once every connection thread has finished.
  void Stop();

 private:
  struct Slot {
    std::unique_ptr<Connection> connection;
    std::thread thread;
    // Serve() has returned, the thread can be joined. Guarded by the server's mutex_ (which an
    // annotation here would take for a Slot's own).
    bool done = false;
  };

  void AcceptLoop();
  void ReapFinished();

  const Handler handler_;
  const HttpServerOptions options_;
  std::shared_ptr<const TlsServerContext> tls_;  // set by Start() when options_.tls
  StopSignal stop_;
  int wake_write_fd_ = -1;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  Mutex stop_mutex_;  // serialises Stop()
  Mutex mutex_;
  std::list<Slot> slots_ GUARDED_BY(mutex_);
};

}  // namespace dljob::http
