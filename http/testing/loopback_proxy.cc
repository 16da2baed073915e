// See loopback_proxy.h.
#include "http/testing/loopback_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <openssl/evp.h>

#include "http/http_util.h"
#include "http/testing/loopback_http_server.h"

namespace dljob::http::testing {
namespace {

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string BasicAuthorization(const LoopbackProxy::Credentials& c) {
  if (c.username.empty()) return "";
  std::string plain = c.username + ":" + c.password;
  std::string out(4 * ((plain.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(plain.data()),
                          static_cast<int>(plain.size()));
  out.resize(static_cast<size_t>(n));
  return "Basic " + out;
}

// The port of "127.0.0.1:<port>" or "localhost:<port>"; 0 for anything else.
int LoopbackPort(const std::string& authority) {
  size_t colon = authority.rfind(':');
  if (colon == std::string::npos) return 0;
  std::string host = authority.substr(0, colon);
  if (host != "127.0.0.1" && host != "localhost") return 0;
  int port = std::atoi(authority.c_str() + colon + 1);
  return port > 0 && port < 65536 ? port : 0;
}

int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

// "http://host:port/path?q" into "host:port" and "/path?q".
bool SplitAbsolute(const std::string& target, std::string* authority, std::string* origin) {
  if (target.rfind("http://", 0) != 0) return false;
  size_t slash = target.find('/', 7);
  *authority = target.substr(7, slash == std::string::npos ? std::string::npos : slash - 7);
  *origin = slash == std::string::npos ? "/" : target.substr(slash);
  return !authority->empty();
}

// The request head in origin form, without the headers meant for the proxy.
std::string OriginFormHead(const ReceivedRequest& req, const std::string& origin) {
  std::string head = req.method + " " + origin + " HTTP/1.1\r\n";
  for (const auto& [name, value] : req.headers) {
    if (EqualsIgnoreCase(name, "Proxy-Authorization") ||
        EqualsIgnoreCase(name, "Proxy-Connection")) {
      continue;
    }
    head += name + ": " + value + "\r\n";
  }
  return head + "\r\n";
}

std::string Answer(int status, const char* reason, const char* extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n" + extra +
         "Content-Length: 0\r\nConnection: close\r\n\r\n";
}

}  // namespace

LoopbackProxy::LoopbackProxy(Credentials credentials)
    : expected_authorization_(BasicAuthorization(credentials)),
      listener_([this](int fd) { Serve(fd); }) {}

LoopbackProxy::~LoopbackProxy() { listener_.Stop(); }

std::vector<std::string> LoopbackProxy::tunnels() const {
  MutexLock lock(mu_);
  return tunnels_;
}

std::vector<std::string> LoopbackProxy::forwarded() const {
  MutexLock lock(mu_);
  return forwarded_;
}

int LoopbackProxy::refused() const {
  MutexLock lock(mu_);
  return refused_;
}

bool LoopbackProxy::Authorized(const std::string& proxy_authorization) {
  if (expected_authorization_.empty() || proxy_authorization == expected_authorization_) {
    return true;
  }
  MutexLock lock(mu_);
  ++refused_;
  return false;
}

void LoopbackProxy::Serve(int fd) {
  std::string buf;
  char tmp[4096];
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return;
    buf.append(tmp, static_cast<size_t>(n));
  }
  ReceivedRequest first = ParseReceivedHead(std::string_view(buf).substr(0, end));
  bool tunnel = first.method == "CONNECT";
  std::string authority = first.target;
  std::string origin;
  if (!tunnel && !SplitAbsolute(first.target, &authority, &origin)) {
    SendAll(fd, Answer(400, "Bad Request"));
    return;
  }
  if (!Authorized(HeaderValue(first.headers, "Proxy-Authorization"))) {
    SendAll(fd, Answer(407, "Proxy Authentication Required",
                       "Proxy-Authenticate: Basic realm=\"loopback\"\r\n"));
    return;
  }
  int port = LoopbackPort(authority);
  if (port == 0) {
    SendAll(fd, Answer(403, "Forbidden"));
    return;
  }
  int upstream = ConnectLoopback(port);
  if (upstream < 0) {
    SendAll(fd, Answer(502, "Bad Gateway"));
    return;
  }
  if (listener_.Track(upstream)) {
    if (tunnel) {
      buf.erase(0, end + 4);
      {
        MutexLock lock(mu_);
        tunnels_.push_back(authority);
      }
      if (SendAll(fd, "HTTP/1.1 200 Connection established\r\n\r\n")) {
        Relay(fd, upstream, std::move(buf), false, authority);
      }
    } else {
      Relay(fd, upstream, std::move(buf), true, authority);
    }
    listener_.Untrack(upstream);
  }
  ::close(upstream);
}

void LoopbackProxy::Relay(int client, int upstream, std::string pending, bool forward,
                          const std::string& authority) {
  size_t body_left = 0;  // of the request being forwarded
  // Sends on what the client sent; false when the connection is to end.
  auto pass_on = [&]() {
    if (!forward) {
      bool ok = SendAll(upstream, pending);
      pending.clear();
      return ok;
    }
    while (true) {
      if (body_left > 0) {
        size_t n = std::min(body_left, pending.size());
        if (n == 0) return true;
        if (!SendAll(upstream, std::string_view(pending).substr(0, n))) return false;
        pending.erase(0, n);
        body_left -= n;
        continue;
      }
      size_t end = pending.find("\r\n\r\n");
      if (end == std::string::npos) return true;
      ReceivedRequest req = ParseReceivedHead(std::string_view(pending).substr(0, end));
      pending.erase(0, end + 4);
      std::string req_authority;
      std::string origin;
      if (!Authorized(HeaderValue(req.headers, "Proxy-Authorization"))) {
        SendAll(client, Answer(407, "Proxy Authentication Required",
                               "Proxy-Authenticate: Basic realm=\"loopback\"\r\n"));
        return false;
      }
      if (!SplitAbsolute(req.target, &req_authority, &origin) || req_authority != authority) {
        return false;
      }
      {
        MutexLock lock(mu_);
        forwarded_.push_back(req.target);
      }
      if (!SendAll(upstream, OriginFormHead(req, origin))) return false;
      body_left = std::strtoul(HeaderValue(req.headers, "Content-Length").c_str(), nullptr, 10);
    }
  };
  if (!pass_on()) return;
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  char tmp[16384];
  while (true) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) {
      ssize_t n = ::recv(client, tmp, sizeof tmp, 0);
      if (n <= 0) return;
      pending.append(tmp, static_cast<size_t>(n));
      if (!pass_on()) return;
    }
    if (fds[1].revents != 0) {
      ssize_t n = ::recv(upstream, tmp, sizeof tmp, 0);
      if (n <= 0 || !SendAll(client, std::string_view(tmp, static_cast<size_t>(n)))) return;
    }
  }
}

}  // namespace dljob::http::testing
