// See socket_client.h.
#include "http/socket_client.h"

#include <poll.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/base64.h"
#include "base/mutex.h"
#include "http/client_connection.h"
#include "http/client_tls.h"
#include "http/http_util.h"
#include "http/proxy.h"
#include "http/url.h"

namespace dljob::http {

// What a base URL says: "http[s]://host[:port][/prefix]". (A member of SocketClientState, so not
// in the anonymous namespace.)
struct BaseUrl {
  bool https = false;
  std::string host;       // without brackets
  int port = 0;           // the URL's, else the scheme's default
  std::string authority;  // host[:port] as the URL gives them: the Host header
  std::string prefix;     // a path every target goes under, without a trailing '/'
};

namespace {

using Clock = Deadline::Clock;
constexpr size_t kMaxIdle = 64;
constexpr auto kIdleLimit = std::chrono::seconds(90);

Result<BaseUrl> ParseBaseUrl(const std::string& url) {
  if (!url.starts_with("https://") && !url.starts_with("http://")) {
    return Status::InvalidArgument("server URL must start with https:// or http://, got \"" + url +
                                   "\"");
  }
  auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument("server URL \"" + url + "\" is not a valid URL: " + why);
  };
  UrlParts parts;
  if (std::optional<std::string> why = SplitUrl(url, &parts)) return invalid(*why);
  if (parts.userinfo) return invalid("user info is not allowed");
  if (parts.rest.find_first_of("?#") != std::string::npos) {
    return invalid("a query or fragment is not allowed");
  }
  BaseUrl out;
  out.https = parts.scheme == "https";
  out.host = parts.host;
  out.port = parts.port.empty() ? DefaultPort(parts.scheme) : *ParsePort(parts.port);
  if (out.port == 0) return invalid("port 0");
  // The Host header: the port only when the URL names one, an IPv6 address in brackets.
  out.authority = JoinHostPort(out.host, out.port);
  if (parts.port.empty()) out.authority.resize(out.authority.rfind(':'));
  std::string_view prefix = parts.rest;
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  out.prefix = std::string(prefix);
  return out;
}

Status CheckServerName(const std::string& name) {
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_';
    if (!ok && !IsIpAddress(name)) {
      return Status::InvalidArgument("tls-server-name \"" + name +
                                     "\" is not a host name or IP address");
    }
  }
  return Status::Ok();
}

bool SendsBody(const ClientRequest& r) {
  return !r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH";
}

// Reads a body by its framing, piece by piece.
class BodyReader {
 public:
  BodyReader(const ResponseHead& head, bool bodiless)
      : decoder_(SIZE_MAX, 64 * 1024), keep_alive_(head.keep_alive) {
    if (bodiless) {
      mode_ = Mode::kNone;
    } else if (head.chunked) {
      mode_ = Mode::kChunked;
    } else if (head.content_length) {
      mode_ = Mode::kLength;
      remaining_ = *head.content_length;
    } else {
      mode_ = Mode::kUntilClose;
    }
  }

  enum class Got { kSome, kEnd, kNothingYet };
  // Appends the next bytes of the body to *out (kSome), or says the body has ended (kEnd). With
  // `deadline` it waits for them; without, it returns kNothingYet when none have arrived, with
  // *want saying what to poll the connection's socket for.
  ClientResult<Got> ReadSome(ClientConnection& conn, const Deadline* deadline, std::string* out,
                             short* want = nullptr) {
    while (!done_) {
      std::string& buf = conn.buffer();
      switch (mode_) {
        case Mode::kNone:
          done_ = true;
          return Got::kEnd;
        case Mode::kLength:
          if (remaining_ == 0) {
            done_ = true;
            return Got::kEnd;
          }
          if (!buf.empty()) {
            size_t n = static_cast<size_t>(std::min<std::uint64_t>(remaining_, buf.size()));
            out->append(buf, 0, n);
            buf.erase(0, n);
            remaining_ -= n;
            return Got::kSome;
          }
          break;
        case Mode::kChunked:
          if (!buf.empty()) {
            size_t before = out->size();
            size_t consumed = 0;
            ChunkedDecoder::Result r = decoder_.Feed(buf, &consumed, out);
            buf.erase(0, consumed);
            if (r == ChunkedDecoder::Result::kMalformed || r == ChunkedDecoder::Result::kTooLarge) {
              return ClientError{Failure::kTransportError, "malformed chunked body"};
            }
            if (r == ChunkedDecoder::Result::kDone) done_ = true;
            if (out->size() > before) return Got::kSome;
            if (done_) return Got::kEnd;
          }
          break;
        case Mode::kUntilClose:
          if (!buf.empty()) {
            out->append(buf);
            buf.clear();
            return Got::kSome;
          }
          break;
      }
      size_t n;
      if (deadline != nullptr) {
        ClientResult<size_t> filled = conn.Fill(*deadline);
        if (!filled.ok()) return filled.error();
        n = *filled;
      } else {
        short ignored;
        ClientResult<std::optional<size_t>> filled = conn.TryFill(want ? want : &ignored);
        if (!filled.ok()) return filled.error();
        if (!*filled) return Got::kNothingYet;
        n = **filled;
      }
      if (n == 0) {
        if (mode_ != Mode::kUntilClose) {
          return ClientError{Failure::kTransportError,
                             "the connection closed before the body's end"};
        }
        done_ = true;
        closed_ = true;
      }
    }
    return Got::kEnd;
  }

  // Whether the connection may carry another request, once the body has been read to its end.
  bool reusable() const { return done_ && !closed_ && mode_ != Mode::kUntilClose && keep_alive_; }

 private:
  enum class Mode { kNone, kLength, kChunked, kUntilClose };
  Mode mode_ = Mode::kNone;
  std::uint64_t remaining_ = 0;
  ChunkedDecoder decoder_;
  bool keep_alive_;
  bool done_ = false;
  bool closed_ = false;
};

bool Bodiless(const std::string& method, int status) {
  return method == "HEAD" || status / 100 == 1 || status == 204 || status == 304;
}

}  // namespace

// What a client and its open streams share (its connection pool above all).
struct SocketClientState {
  std::string server;  // the base URL without a trailing '/', for messages
  BaseUrl base;
  Route route;
  std::string absolute_prefix;      // "http://host:port" when requests go to a plain-HTTP proxy
  std::string proxy_authorization;  // for those requests: "Basic ..." or ""
  std::string via;                  // " via proxy http://host:port" (no credentials), or ""
  std::unique_ptr<ClientTlsContext> tls;
  std::chrono::milliseconds default_timeout{30'000};

  Mutex mu;
  struct Idle {
    std::unique_ptr<ClientConnection> conn;
    Clock::time_point since;
  };
  std::vector<Idle> idle GUARDED_BY(mu);  // most recently used last

  std::string What(const ClientRequest& r) const {
    return r.method + " " + server + r.target + via;
  }
  ClientError Named(const ClientRequest& r, ClientError e) const {
    e.message = What(r) + ": " + e.message;
    return e;
  }
  Deadline DeadlineOf(const ClientRequest& r) const {
    auto idle = r.timeout > std::chrono::milliseconds::zero() ? r.timeout : default_timeout;
    return Deadline::Of(idle, r.total_timeout);
  }

  std::string Format(const ClientRequest& r) const {
    std::string out;
    out.reserve(256 + r.body.size());
    out += r.method;
    out += ' ';
    out += absolute_prefix;
    out += base.prefix;
    out += r.target.empty() ? "/" : r.target;
    out += " HTTP/1.1\r\n";
    bool has_host = false;
    bool has_type = false;
    for (const auto& [name, value] : r.headers) {
      if (EqualsIgnoreCase(name, "Content-Length")) continue;  // ours, from the body
      has_host = has_host || EqualsIgnoreCase(name, "Host");
      has_type = has_type || EqualsIgnoreCase(name, "Content-Type");
      out += name;
      out += ": ";
      out += value;
      out += "\r\n";
    }
    if (!has_host) out += "Host: " + base.authority + "\r\n";
    if (!proxy_authorization.empty()) {
      out += "Proxy-Authorization: " + proxy_authorization + "\r\n";
    }
    if (SendsBody(r)) {
      if (!has_type) out += "Content-Type: application/octet-stream\r\n";
      out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    }
    out += "\r\n";
    out += r.body;
    return out;
  }

  // A kept-alive connection that still looks open, or none.
  std::unique_ptr<ClientConnection> TakeIdle() {
    std::vector<std::unique_ptr<ClientConnection>> stale;  // closed outside the lock
    std::unique_ptr<ClientConnection> found;
    {
      MutexLock lock(mu);
      const Clock::time_point now = Clock::now();
      while (!idle.empty() && !found) {
        Idle last = std::move(idle.back());
        idle.pop_back();
        if (now - last.since < kIdleLimit && last.conn->Reusable()) {
          found = std::move(last.conn);
        } else {
          stale.push_back(std::move(last.conn));
        }
      }
    }
    return found;
  }

  void PutIdle(std::unique_ptr<ClientConnection> conn) {
    MutexLock lock(mu);
    if (idle.size() >= kMaxIdle) return;  // closed on return
    idle.push_back({std::move(conn), Clock::now()});
  }

  struct Exchange {
    std::unique_ptr<ClientConnection> conn;
    ResponseHead head;
  };

  // Sends `request` and reads the answer's head, skipping 1xx answers.
  ClientResult<Exchange> Start(const ClientRequest& request, const Deadline& deadline) {
    const std::string bytes = Format(request);
    const bool replayable =
        request.method == "GET" || request.method == "HEAD" || request.method == "OPTIONS";
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<ClientConnection> conn = attempt == 0 ? TakeIdle() : nullptr;
      const bool reused = conn != nullptr;
      const size_t received_before = reused ? conn->received() : 0;
      if (!reused) {
        ClientResult<std::unique_ptr<ClientConnection>> opened =
            ClientConnection::Open(route, tls.get(), deadline);
        if (!opened.ok()) return Named(request, opened.error());
        conn = std::move(opened).value();
      }
      std::optional<ClientError> error = conn->WriteAll(bytes, deadline);
      const bool write_failed = error.has_value();
      Exchange out;
      while (!error) {
        ClientResult<std::string> head = conn->ReadHead(deadline);
        if (!head.ok()) {
          error = head.error();
          break;
        }
        if (auto bad = ParseResponseHead(*head, &out.head)) {
          error = ClientError{Failure::kTransportError, "malformed answer: " + *bad};
          break;
        }
        if (out.head.status / 100 != 1 || out.head.status == 101) {
          out.conn = std::move(conn);
          return out;
        }
      }
      // A kept-alive connection the server had closed: nothing of the answer arrived.
      bool stale = reused && conn->received() == received_before &&
                   error->failure == Failure::kTransportError;
      if (stale && (replayable || write_failed)) continue;
      return Named(request, *error);
    }
  }
};

namespace {

class SocketBodyStream final : public BodyStream {
 public:
  SocketBodyStream(std::shared_ptr<SocketClientState> client,
                   std::unique_ptr<ClientConnection> conn, const ResponseHead& head,
                   const ClientRequest& request)
      : client_(std::move(client)),
        reader_(head, Bodiless(request.method, head.status)),
        deadline_(Deadline::Idle(request.timeout > std::chrono::milliseconds::zero()
                                     ? request.timeout
                                     : client_->default_timeout)),
        what_(client_->What(request)),
        conn_(std::move(conn)) {}
  ~SocketBodyStream() override { Cancel(); }

  ClientResult<std::optional<std::string>> Read() override {
    ClientResult<ReadyBytes> got = Step(true);
    if (!got.ok()) return got.error();
    if (got->end) return std::optional<std::string>();
    return std::optional<std::string>(std::move(got->bytes));
  }

  ClientResult<ReadyBytes> TryRead() override { return Step(false); }

  void Cancel() override {
    MutexLock lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    if (conn_) conn_->Shutdown();
  }

 private:
  ClientError Cancelled() const { return ClientError{Failure::kCancelled, what_ + ": cancelled"}; }

  // Read() when `wait`, else TryRead().
  ClientResult<ReadyBytes> Step(bool wait) {
    ClientConnection* conn;
    {
      MutexLock lock(mu_);
      if (cancelled_) return Cancelled();
      if (error_) return *error_;
      if (!conn_) {
        ReadyBytes ended;
        ended.end = true;
        return ended;
      }
      conn = conn_.get();  // only the reader resets conn_
    }
    ReadyBytes out;
    short want = POLLIN;
    ClientResult<BodyReader::Got> got =
        reader_.ReadSome(*conn, wait ? &deadline_ : nullptr, &out.bytes, &want);
    const auto now = Deadline::Clock::now();
    if (got.ok() && *got == BodyReader::Got::kNothingYet && now - last_arrival_ >= deadline_.idle) {
      got = ClientError{Failure::kTimeout,
                        "nothing arrived for " + std::to_string(deadline_.idle.count()) + " ms"};
    }
    std::unique_ptr<ClientConnection> done;  // closed, or given back, outside the lock
    MutexLock lock(mu_);
    if (cancelled_) return Cancelled();
    if (!got.ok()) {
      error_ = ClientError{got.error().failure, what_ + ": " + got.error().message};
      done = std::move(conn_);
      return *error_;
    }
    switch (*got) {
      case BodyReader::Got::kSome:
        last_arrival_ = now;
        return out;
      case BodyReader::Got::kNothingYet:
        out.wait = Readiness{conn->fd(), want, last_arrival_ + deadline_.idle};
        return out;
      case BodyReader::Got::kEnd:
        break;
    }
    if (reader_.reusable()) {
      client_->PutIdle(std::move(conn_));
    } else {
      done = std::move(conn_);
    }
    out.end = true;
    return out;
  }

  const std::shared_ptr<SocketClientState> client_;
  BodyReader reader_;                                                  // the reader's
  Deadline::Clock::time_point last_arrival_ = Deadline::Clock::now();  // the reader's
  const Deadline deadline_;
  const std::string what_;
  Mutex mu_;
  std::unique_ptr<ClientConnection> conn_ GUARDED_BY(mu_);  // null once the body ended
  bool cancelled_ GUARDED_BY(mu_) = false;
  std::optional<ClientError> error_ GUARDED_BY(mu_);
};

}  // namespace

SocketClient::SocketClient(std::shared_ptr<SocketClientState> impl) : impl_(std::move(impl)) {}
SocketClient::~SocketClient() = default;

Result<std::unique_ptr<SocketClient>> SocketClient::Create(const ClientOptions& options) {
  auto impl = std::make_shared<SocketClientState>();
  impl->server = options.base_url;
  while (!impl->server.empty() && impl->server.back() == '/') impl->server.pop_back();
  Result<BaseUrl> base = ParseBaseUrl(options.base_url);
  if (!base.ok()) return base.status();
  impl->base = std::move(base).value();
  impl->route.host = impl->base.host;
  impl->route.port = impl->base.port;
  if (Status s = CheckServerName(options.tls_server_name); !s.ok()) return s;
  {  // checked for http:// too: a bad certificate in a kubeconfig is an error either way
    ClientTlsOptions tls;
    tls.ca_pem = options.ca_pem;
    tls.cert_pem = options.client_cert_pem;
    tls.key_pem = options.client_key_pem;
    tls.server_name = options.tls_server_name.empty() ? impl->base.host : options.tls_server_name;
    tls.verify = !options.insecure_skip_tls_verify;
    Result<std::unique_ptr<ClientTlsContext>> ctx = ClientTlsContext::Make(tls);
    if (!ctx.ok()) return ctx.status();
    if (impl->base.https) impl->tls = std::move(ctx).value();
  }
  if (!options.proxy_url.empty()) {
    Result<ProxyUrl> proxy = ParseProxyUrl(options.proxy_url);
    if (!proxy.ok()) return proxy.status();
    if (proxy->scheme != "http") {
      return Status::InvalidArgument(
          "proxy URL \"" + proxy->Redacted() + "\": " + proxy->scheme +
          ":// proxies are not supported, only http:// ones (which tunnel https:// requests too)");
    }
    std::string authorization;
    if (!proxy->username.empty() || !proxy->password.empty()) {
      authorization = "Basic " + Base64Encode(proxy->username + ":" + proxy->password);
    }
    impl->route.proxy_host = proxy->host;
    impl->route.proxy_port = proxy->port;
    if (impl->base.https) {
      impl->route.proxy_authorization = authorization;
    } else {
      impl->absolute_prefix = "http://" + impl->base.authority;
      impl->proxy_authorization = authorization;
    }
    impl->via = " via proxy " + proxy->Redacted();
  }
  impl->default_timeout = options.default_timeout;
  return std::unique_ptr<SocketClient>(new SocketClient(std::move(impl)));
}

ClientResult<ClientResponse> SocketClient::Send(const ClientRequest& request) {
  const Deadline deadline = impl_->DeadlineOf(request);
  ClientResult<SocketClientState::Exchange> exchange = impl_->Start(request, deadline);
  if (!exchange.ok()) return exchange.error();
  ClientResponse out;
  out.status = exchange->head.status;
  out.headers = std::move(exchange->head.headers);
  BodyReader reader(exchange->head, Bodiless(request.method, out.status));
  while (true) {
    ClientResult<BodyReader::Got> more = reader.ReadSome(*exchange->conn, &deadline, &out.body);
    if (!more.ok()) return impl_->Named(request, more.error());
    if (*more == BodyReader::Got::kEnd) break;
  }
  if (reader.reusable()) impl_->PutIdle(std::move(exchange->conn));
  return out;
}

ClientResult<StreamedResponse> SocketClient::Open(const ClientRequest& request) {
  ClientResult<SocketClientState::Exchange> exchange =
      impl_->Start(request, impl_->DeadlineOf(request));
  if (!exchange.ok()) return exchange.error();
  StreamedResponse out;
  out.status = exchange->head.status;
  out.body =
      std::make_unique<SocketBodyStream>(impl_, std::move(exchange->conn), exchange->head, request);
  out.headers = std::move(exchange->head.headers);
  return out;
}

}  // namespace dljob::http
