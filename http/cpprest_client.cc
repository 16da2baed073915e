// See cpprest_client.h.
#include "http/cpprest_client.h"

#include <arpa/inet.h>

#include <atomic>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include <cpprest/http_client.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pplx/threadpool.h>

#include "base/mutex.h"
#include "http/proxy.h"

namespace dljob::http {

// A member of CpprestClient::Impl, so not in the anonymous namespace (-Wsubobject-linkage).
struct CpprestTls {
  std::string ca;
  std::string cert;
  std::string key;
  std::string server_name;  // checked in the certificate, sent as SNI: never empty for https
  bool verify = true;
};

namespace {

namespace cpprest = web::http;
using cpprest::client::http_client;
using Tls = CpprestTls;

bool IsIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// A verify callback that keeps OpenSSL's own verdict (chain, and the name in the verification
// parameters). SSL_set_verify ignores a null callback, so replacing one takes one of these.
int KeepVerdict(int preverified, X509_STORE_CTX* /*ctx*/) { return preverified; }

// OpenSSL's info callback at the start of each handshake. cpprestsdk sets its own verify mode and
// callback on each connection's SSL just before the handshake, a name check against the
// request's Host header when there is one (port and all) and the base URL's host otherwise; this
// puts back the context's mode with OpenSSL's built-in check, which verifies the chain and the
// name the SSL inherited from the context's verification parameters, and sends that name as SNI.
void StartHandshake(const SSL* session, int where, int /*ret*/) {
  if ((where & SSL_CB_HANDSHAKE_START) == 0) return;
  SSL* ssl = const_cast<SSL*>(session);  // the session OpenSSL is running, ours to set up
  SSL_set_verify(ssl, SSL_CTX_get_verify_mode(SSL_get_SSL_CTX(ssl)), KeepVerdict);
  if (const char* host = X509_VERIFY_PARAM_get0_host(SSL_get0_param(ssl), 0)) {
    SSL_set_tlsext_host_name(ssl, host);
  }
}

// Makes every connection made from `ctx` verify the server's certificate against `name` (when
// `verify`) and send it as SNI (unless it is an IP address).
void UseServerName(const std::string& name, bool verify, boost::asio::ssl::context& ctx) {
  SSL_CTX* c = ctx.native_handle();
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(c);
  if (IsIpAddress(name)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  }
  SSL_CTX_set_verify(c, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, KeepVerdict);
  SSL_CTX_set_info_callback(c, StartHandshake);
}

// Trust only the configured CA (cpprestsdk loads the system roots before calling us), present
// the client certificate, check the configured server name. Throws boost::system::system_error
// on bad PEM.
void ConfigureSsl(const Tls& tls, boost::asio::ssl::context& ctx) {
  if (!tls.ca.empty()) {
    SSL_CTX_set_cert_store(ctx.native_handle(), X509_STORE_new());
    ctx.add_certificate_authority(boost::asio::buffer(tls.ca));
  }
  if (!tls.cert.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(tls.cert));
    ctx.use_private_key(boost::asio::buffer(tls.key), boost::asio::ssl::context::pem);
  }
  UseServerName(tls.server_name, tls.verify, ctx);
}

Status CheckTls(const Tls& tls) {
  boost::asio::ssl::context ctx(boost::asio::ssl::context::sslv23);
  boost::system::error_code ec;
  auto fail = [&](const char* what) {
    return Status::InvalidArgument(what + (": " + ec.message()));
  };
  if (!tls.ca.empty() && ctx.add_certificate_authority(boost::asio::buffer(tls.ca), ec)) {
    return fail("certificate-authority is not a valid PEM certificate bundle");
  }
  if (!tls.cert.empty()) {
    if (ctx.use_certificate_chain(boost::asio::buffer(tls.cert), ec)) {
      return fail("client-certificate is not a valid PEM certificate");
    }
    if (ctx.use_private_key(boost::asio::buffer(tls.key), boost::asio::ssl::context::pem, ec)) {
      return fail("client-key is not a valid PEM private key for client-certificate");
    }
  }
  return Status::Ok();
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

// A proxy URL this client can use: http:// only.
Result<ProxyUrl> CheckProxy(const std::string& url) {
  Result<ProxyUrl> proxy = ParseProxyUrl(url);
  if (proxy.ok() && proxy->scheme != "http") {
    return Status::InvalidArgument(
        "proxy URL \"" + proxy->Redacted() + "\": " + proxy->scheme +
        ":// proxies are not supported, only http:// ones (which tunnel https:// requests too)");
  }
  return proxy;
}

// The proxy as cpprestsdk takes it: its address, the port always written out (cpprestsdk would
// not default it to 80), and the credentials from the URL.
web::web_proxy CpprestProxy(const ProxyUrl& proxy) {
  web::web_proxy out(web::uri(proxy.Redacted()));
  if (!proxy.username.empty()) out.set_credentials({proxy.username, proxy.password});
  return out;
}

// cpprestsdk reports every failure as an exception; its message tells the connect phase apart.
ClientError Translate(std::exception_ptr error, const std::string& what) {
  try {
    std::rethrow_exception(error);
  } catch (const cpprest::http_exception& e) {
    std::string message = what + ": " + e.what();
    if (e.error_code() == std::errc::timed_out) return {Failure::kTimeout, message};
    if (e.error_code() == std::errc::operation_canceled) return {Failure::kCancelled, message};
    std::string_view m = e.what();
    // cpprestsdk's messages from setting up a CONNECT tunnel all name the proxy; the request has
    // not reached the server then.
    if (m.starts_with("Failed to connect") || m.starts_with("Error resolving") ||
        m.starts_with("Failed to resolve") || m.find("proxy") != std::string_view::npos) {
      return {Failure::kConnectFailed, message};
    }
    return {Failure::kTransportError, message};
  } catch (const pplx::task_canceled&) {
    return {Failure::kCancelled, what + ": cancelled"};
  } catch (const std::exception& e) {
    return {Failure::kTransportError, what + ": " + e.what()};
  } catch (...) {
    return {Failure::kTransportError, what + ": unknown error"};
  }
}

HttpHeaders ToHeaders(const cpprest::http_headers& in) {
  HttpHeaders out;
  for (const auto& [name, value] : in) out.emplace_back(name, value);
  return out;
}

// A request's total_timeout: cancels the exchange (its token source) when the limit passes, unless
// Settle() came first. The timer runs on cpprestsdk's own Asio service, so no thread waits for it.
class ExchangeTimer {
 public:
  ExchangeTimer(std::chrono::milliseconds limit, pplx::cancellation_token_source cts) {
    if (limit <= std::chrono::milliseconds::zero()) return;
    state_ = std::make_shared<State>(crossplat::threadpool::shared_instance().service());
    state_->timer.expires_after(limit);
    state_->timer.async_wait([s = state_, cts](const boost::system::error_code& ec) mutable {
      if (ec || s->settled.exchange(true)) return;  // stopped, or the exchange settled first
      cts.cancel();
    });
  }
  ~ExchangeTimer() { Settle(); }
  ExchangeTimer(const ExchangeTimer&) = delete;
  ExchangeTimer& operator=(const ExchangeTimer&) = delete;

  // Stops the timer; false when it had already fired (the exchange was cancelled for it).
  bool Settle() {
    if (!state_) return true;
    bool in_time = !state_->settled.exchange(true);
    state_->timer.cancel();
    return in_time;
  }

 private:
  struct State {
    explicit State(boost::asio::io_service& io) : timer(io) {}
    boost::asio::steady_timer timer;
    std::atomic<bool> settled{false};
  };
  std::shared_ptr<State> state_;
};

ClientError TotalTimeout(const std::string& what, std::chrono::milliseconds limit) {
  return {Failure::kTimeout, what + ": no answer within its total timeout of " +
                                 std::to_string(limit.count()) + " ms"};
}

// What a streamed body's pump (on cpprestsdk's threads) and its reader share.
struct StreamState {
  Mutex mu;
  std::condition_variable_any cv;
  std::deque<std::string> chunks GUARDED_BY(mu);
  bool done GUARDED_BY(mu) = false;
  bool cancelled GUARDED_BY(mu) = false;
  std::optional<ClientError> error GUARDED_BY(mu);
  pplx::cancellation_token_source cts;
  cpprest::http_response response;  // owns the body buffer the pump reads
  std::string what;

  void Finish(std::optional<ClientError> e) {
    MutexLock lock(mu);
    done = true;
    error = std::move(e);
    cv.notify_all();
  }
};

constexpr size_t kReadSize = 64 * 1024;

// Waits for one byte, then takes whatever else is already buffered (up to kReadSize in all) into
// a string of that size, queues it, repeats. Between reads a stream holds one byte of its own: a
// log followed for hours mostly waits, and the operator follows one per running job.
void Pump(std::shared_ptr<StreamState> s) {
  concurrency::streams::streambuf<uint8_t> buf = s->response.body().streambuf();
  auto first = std::make_shared<uint8_t>(0);
  buf.getn(first.get(), 1).then([s, buf, first](pplx::task<size_t> got) mutable {
    std::string chunk;
    try {
      if (got.get() > 0) {
        const size_t more = std::min<size_t>(buf.in_avail(), kReadSize - 1);
        chunk.resize(1 + more);
        chunk[0] = static_cast<char>(*first);
        if (more > 0) {
          const size_t n = buf.getn(reinterpret_cast<uint8_t*>(chunk.data()) + 1, more).get();
          chunk.resize(1 + n);
        }
      }
    } catch (...) {
      s->Finish(Translate(std::current_exception(), s->what));
      return;
    }
    if (chunk.empty()) {
      s->Finish(std::nullopt);
      return;
    }
    {
      MutexLock lock(s->mu);
      if (s->cancelled) return;
      s->chunks.push_back(std::move(chunk));
      s->cv.notify_all();
    }
    Pump(std::move(s));
  });
}

class CpprestBodyStream final : public BodyStream {
 public:
  explicit CpprestBodyStream(std::shared_ptr<StreamState> state) : s_(std::move(state)) {}
  ~CpprestBodyStream() override { Cancel(); }

  ClientResult<std::optional<std::string>> Read() override {
    MutexLock lock(s_->mu);
    while (!s_->cancelled && s_->chunks.empty() && !s_->done) s_->cv.wait(s_->mu);
    if (s_->cancelled) return ClientError{Failure::kCancelled, s_->what + ": cancelled"};
    if (!s_->chunks.empty()) {
      std::string out = std::move(s_->chunks.front());
      s_->chunks.pop_front();
      return std::optional<std::string>(std::move(out));
    }
    if (s_->error) return *s_->error;
    return std::optional<std::string>();
  }

  void Cancel() override {
    bool was_running;
    {
      MutexLock lock(s_->mu);
      was_running = !s_->cancelled && !s_->done;
      s_->cancelled = true;
      s_->cv.notify_all();
    }
    if (was_running) s_->cts.cancel();  // closes the connection; the pump then ends
  }

 private:
  std::shared_ptr<StreamState> s_;
};

}  // namespace

struct CpprestClient::Impl {
  std::string server;  // the base URL without a trailing '/'
  bool https = false;
  Tls tls;
  std::optional<web::web_proxy> proxy;
  std::string via;  // " via proxy http://host:port" (no credentials), or ""
  std::chrono::milliseconds default_timeout{30'000};
  Mutex mu;
  std::map<int64_t, std::shared_ptr<http_client>> clients GUARDED_BY(mu);  // by timeout in ms

  std::shared_ptr<http_client> Client(std::chrono::milliseconds timeout) {
    if (timeout <= std::chrono::milliseconds::zero()) timeout = default_timeout;
    MutexLock lock(mu);
    std::shared_ptr<http_client>& client = clients[timeout.count()];
    if (!client) {
      cpprest::client::http_client_config config;
      config.set_timeout(timeout);
      config.set_max_redirects(0);
      config.set_validate_certificates(tls.verify);
      if (proxy) config.set_proxy(*proxy);
      if (https) {
        Tls copy = tls;
        config.set_ssl_context_callback(
            [copy](boost::asio::ssl::context& ctx) { ConfigureSsl(copy, ctx); });
        config.set_tlsext_sni_enabled(false);  // StartHandshake sends ours
      }
      client = std::make_shared<http_client>(web::uri(server), config);
    }
    return client;
  }

  // Builds the cpprestsdk request; throws web::uri_exception on a malformed target. The headers
  // go as given; set_body() adds Content-Length, and Content-Type only where none was given.
  static cpprest::http_request Build(const ClientRequest& r) {
    cpprest::http_request req(r.method);
    req.set_request_uri(web::uri(r.target));
    for (const auto& [name, value] : r.headers) req.headers().add(name, value);
    if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
      req.set_body(std::vector<unsigned char>(r.body.begin(), r.body.end()));
    }
    return req;
  }

  std::string What(const ClientRequest& r) const {
    return r.method + " " + server + r.target + via;
  }
};

CpprestClient::CpprestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpprestClient::~CpprestClient() = default;

Result<std::unique_ptr<CpprestClient>> CpprestClient::Create(const CpprestClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->server = options.base_url;
  while (!impl->server.empty() && impl->server.back() == '/') impl->server.pop_back();
  impl->https = impl->server.starts_with("https://");
  if (!impl->https && !impl->server.starts_with("http://")) {
    return Status::InvalidArgument("server URL must start with https:// or http://, got \"" +
                                   options.base_url + "\"");
  }
  std::string host;
  try {
    web::uri check(impl->server);
    host = check.host();
    if (host.empty()) throw web::uri_exception("no host");
  } catch (const std::exception& e) {
    return Status::InvalidArgument("server URL \"" + options.base_url +
                                   "\" is not a valid URL: " + e.what());
  }
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (Status s = CheckServerName(options.tls_server_name); !s.ok()) return s;
  impl->tls = {options.ca_pem, options.client_cert_pem, options.client_key_pem,
               options.tls_server_name.empty() ? host : options.tls_server_name,
               !options.insecure_skip_tls_verify};
  if (Status s = CheckTls(impl->tls); !s.ok()) return s;
  if (!options.proxy_url.empty()) {
    Result<ProxyUrl> proxy = CheckProxy(options.proxy_url);
    if (!proxy.ok()) return proxy.status();
    impl->proxy = CpprestProxy(*proxy);
    impl->via = " via proxy " + proxy->Redacted();
  }
  impl->default_timeout = options.default_timeout;
  return std::unique_ptr<CpprestClient>(new CpprestClient(std::move(impl)));
}

ClientResult<ClientResponse> CpprestClient::Send(const ClientRequest& request) {
  const std::string what = impl_->What(request);
  pplx::cancellation_token_source cts;
  ExchangeTimer timer(request.total_timeout, cts);
  try {
    cpprest::http_response resp =
        impl_->Client(request.timeout)->request(Impl::Build(request), cts.get_token()).get();
    ClientResponse out;
    out.status = resp.status_code();
    out.headers = ToHeaders(resp.headers());
    if (request.method != "HEAD") {  // a HEAD answer has no body to wait for
      std::vector<unsigned char> body = resp.extract_vector().get();
      out.body.assign(body.begin(), body.end());
    }
    timer.Settle();  // the answer is complete, whether or not the timer fired just now
    return out;
  } catch (...) {
    if (!timer.Settle()) return TotalTimeout(what, request.total_timeout);
    return Translate(std::current_exception(), what);
  }
}

ClientResult<StreamedResponse> CpprestClient::Open(const ClientRequest& request) {
  auto state = std::make_shared<StreamState>();
  state->what = impl_->What(request);
  ExchangeTimer timer(request.total_timeout, state->cts);
  try {
    state->response =
        impl_->Client(request.timeout)->request(Impl::Build(request), state->cts.get_token()).get();
  } catch (...) {
    if (!timer.Settle()) return TotalTimeout(state->what, request.total_timeout);
    return Translate(std::current_exception(), state->what);
  }
  if (!timer.Settle()) return TotalTimeout(state->what, request.total_timeout);
  StreamedResponse out;
  out.status = state->response.status_code();
  out.headers = ToHeaders(state->response.headers());
  Pump(state);
  out.body = std::make_unique<CpprestBodyStream>(std::move(state));
  return out;
}

}  // namespace dljob::http
