// LoopbackProxy: an HTTP proxy on 127.0.0.1 (port chosen by the kernel) for tests of clients
// that go through one. Test-only.
//
// It speaks the two ways clients use an HTTP proxy:
//   - "CONNECT host:port": connects there, answers 200 and relays bytes both ways until either
//     side closes (how https:// requests go through, TLS end to end);
//   - requests in absolute form ("GET http://host:port/path?q HTTP/1.1", how http:// requests go
//     through): each is sent on, in origin form ("GET /path?q") and without its
//     Proxy-Authorization and Proxy-Connection headers, over one upstream connection per client
//     connection, and what comes back is relayed as it arrives (streamed bodies stream). A
//     request for another host than the connection's first closes the connection.
// It reaches only 127.0.0.1 and localhost (anything else: 403), so tests keep their traffic on
// loopback; an upstream that refuses the connection gives 502. With credentials it requires
// "Proxy-Authorization: Basic <base64 of user:password>" on every CONNECT and every request, and
// answers anything else with 407 and closes the connection.
//
// It records what went through it: each tunnel's "host:port", each forwarded request's absolute
// URI, and the number of 407 answers. One thread per client connection (loopback_listener.h);
// the destructor closes every socket and joins. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/mutex.h"
#include "http/testing/loopback_listener.h"

namespace dljob::http::testing {

class LoopbackProxy {
 public:
  struct Credentials {
    std::string username;  // empty: no authentication required
    std::string password;
  };

  explicit LoopbackProxy(Credentials credentials = {});
  ~LoopbackProxy();

  int port() const { return listener_.port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

  std::vector<std::string> tunnels() const;    // "127.0.0.1:4431", one per CONNECT that got 200
  std::vector<std::string> forwarded() const;  // "http://127.0.0.1:8080/x?y", one per request
  int refused() const;                         // 407 answers

 private:
  void Serve(int fd);
  // Relays until either side closes; requests from the client are rewritten when `forward`.
  void Relay(int client, int upstream, std::string pending, bool forward,
             const std::string& authority);
  bool Authorized(const std::string& proxy_authorization);

  const std::string expected_authorization_;  // "" when none is required
  mutable Mutex mu_;
  std::vector<std::string> tunnels_ GUARDED_BY(mu_);
  std::vector<std::string> forwarded_ GUARDED_BY(mu_);
  int refused_ GUARDED_BY(mu_) = 0;
  LoopbackListener listener_;  // last: it starts serving once everything above is ready
};

}  // namespace dljob::http::testing
