// LoopbackListener: a TCP listener on 127.0.0.1 (port chosen by the kernel) that serves each
// accepted connection on a thread of its own: the socket layer under the test servers of
// http/testing (LoopbackHttpServer, LoopbackProxy). Test-only.
//
// The serve function is handed the connection's socket and does not close it: the listener
// shuts it down and closes it once the function returns. SIGPIPE is blocked on the serving
// threads, so writing to a peer that has gone (with send() or through OpenSSL) fails with EPIPE
// instead of killing the test. Stop() — the owner calls it first thing in its destructor, before
// the state its serve function uses goes away — shuts down every socket it knows (the accepted
// ones, and those a serve function registered with Track(), such as a proxy's upstream
// connections), so every blocked read returns, then joins the threads. Thread-safe.
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace dljob::http::testing {

// A TCP socket bound to 127.0.0.1 on a port the kernel chose (written to *port), not listening:
// for a port with nothing behind it (close the socket) or a listener that never accepts. Throws
// std::runtime_error when it cannot bind.
int BindLoopback(int* port);

class LoopbackListener {
 public:
  using Serve = std::function<void(int fd)>;

  // Throws std::runtime_error when it cannot listen (a test cannot go on without it).
  explicit LoopbackListener(Serve serve);
  ~LoopbackListener();  // Stop()
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return port_; }

  // Stops accepting, shuts every known socket down and joins the serving threads. Idempotent.
  void Stop();

  // Registers a socket a serve function opened so that Stop() shuts it down too. False once
  // stopping: the caller then closes it itself. Untrack() it before closing it.
  bool Track(int fd);
  void Untrack(int fd);

 private:
  void AcceptLoop();

  Serve serve_;
  int listen_fd_ = -1;
  int port_ = 0;
  Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<int> fds_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace dljob::http::testing
