// One accepted HTTP/1.1 connection of HttpServer (http_server.h); internal to the server.
//
// Serve() reads requests one after another (keep-alive), calls the handler for each on the
// calling thread, and returns when the client closes, a request is refused, the response said
// "Connection: close", or the server stops. The Connection is also the handler's ResponseWriter.
//
// Over TLS (a server context given), Serve() first completes the handshake (a client that does not
// finish it within 10 s is dropped), then reads and writes through the TLS session.
//
// Ownership: the Connection owns its socket (and TLS session) and closes it when Serve() ends; the
// server destroys it only after the thread running Serve() has been joined. Thread-safety: Serve()
// and the writer methods run on the connection's thread; Shutdown() may be called from any thread
// while the Connection is alive, to wake that thread out of a blocking read or write.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "base/mutex.h"
#include "http/http.h"
#include "http/http_util.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace dljob::http {

struct HttpLimits {
  std::size_t max_header_bytes = 64 * 1024;  // request line + headers; more → 431
  std::size_t max_body_bytes = 32u << 20;    // more → 413
};

// Set once when the server stops. `wake_fd` turns readable at the same moment (it is the read
// end of a pipe that is written once and never drained), so a poll() on it wakes every waiter.
struct StopSignal {
  std::atomic<bool> stopped{false};
  int wake_fd = -1;
};

class Connection : public ResponseWriter {
 public:
  // `tls`: null for plain HTTP; else it must outlive the Connection.
  Connection(int fd, std::string remote, const Handler& handler, const HttpLimits& limits,
             const StopSignal& stop, SSL_CTX* tls = nullptr);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Serves requests until the connection ends, then closes the socket.
  void Serve();
  void Shutdown();  // shutdown(2) on the socket: blocked reads and writes return at once

  void Respond(int status, const HttpHeaders& headers, std::string_view body) override;
  void StartStream(int status, const HttpHeaders& headers) override;
  bool Write(std::string_view data) override;
  bool Connected() override;

 private:
  enum class Reply { kNone, kWhole, kStream };
  enum class Read { kOk, kClosed, kTooLarge };

  void ServeRequests();
  bool Handshake();  // TLS: false when the client did not complete it
  Read ReadHead(std::string* head);
  // Fills request.body per `head`; false after answering the client with an error.
  bool ReadBody(const RequestHead& head, HttpRequest* request);
  bool Fill();  // one recv() into buf_; false on EOF, error or stop
  bool SendAll(std::string_view data);
  void RefuseAndClose(int status, const std::string& message);
  void LingeringClose();
  void Close();

  const int fd_;
  SSL_CTX* const tls_;
  SSL* ssl_ = nullptr;  // the TLS session once Serve() began it; null over plain HTTP
  Mutex fd_mutex_;      // Shutdown() from another thread must not race the close
  bool closed_ GUARDED_BY(fd_mutex_) = false;
  const std::string remote_;
  const Handler& handler_;
  const HttpLimits& limits_;
  const StopSignal& stop_;
  std::string buf_;  // bytes read but not yet parsed
  // Per request:
  Reply reply_ = Reply::kNone;
  bool head_only_ = false;  // HEAD: send headers, no body
  bool keep_alive_ = true;
  bool raw_stream_ = false;  // HTTP/1.0 stream: no chunking, the close ends it
  bool broken_ = false;      // the socket failed or the response cannot be completed
};

}  // namespace dljob::http
