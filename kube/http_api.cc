// See http_api.h.
#include "kube/http_api.h"

#include <algorithm>

#include "http/proxy.h"
#include "http/socket_client.h"
#include "kube/http_streams.h"
#include "kube/object_fields.h"
#include "kube/rest.h"

namespace dljob::kube {

namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;

bool Is2xx(int status) { return status >= 200 && status < 300; }

}  // namespace

HttpApi::HttpApi(http::ClientPtr client, TokenSourcePtr tokens, const ApiOptions& options,
                 Clock& clock)
    : client_(std::move(client)),
      tokens_(std::move(tokens)),
      options_(options),
      clock_(clock),
      limiter_(std::make_shared<RateLimiter>(options.qps, options.burst, clock)),
      jitter_(std::make_shared<Jitter>(options.retry.seed)) {}

HttpApi::HttpApi(const HttpApi& base, Clock::MonotonicTime deadline)
    : client_(base.client_),
      tokens_(base.tokens_),
      options_(base.options_),
      clock_(base.clock_),
      limiter_(base.limiter_),
      jitter_(base.jitter_),
      deadline_(base.deadline_ ? std::min(*base.deadline_, deadline) : deadline) {}

std::unique_ptr<Api> HttpApi::WithDeadline(Clock::MonotonicTime deadline) {
  return std::unique_ptr<Api>(new HttpApi(*this, deadline));
}

http::ClientRequest HttpApi::NewRequest(std::string method, std::string target) const {
  http::ClientRequest req;
  req.method = std::move(method);
  req.target = std::move(target);
  req.headers = {{"Accept", "application/json"}, {"User-Agent", options_.user_agent}};
  req.timeout = options_.request_timeout;
  return req;
}

http::ClientRequest HttpApi::WithBody(std::string method, std::string path, const Json& body,
                                      const char* content_type) const {
  http::ClientRequest req = NewRequest(std::move(method), std::move(path));
  req.headers.emplace_back("Content-Type", content_type);
  req.body = body.dump();
  return req;
}

ApiResult<std::string> HttpApi::Authorize(http::ClientRequest& request, const Reauth& reauth) {
  auto& h = request.headers;
  h.erase(std::remove_if(h.begin(), h.end(),
                         [](const auto& kv) { return kv.first == "Authorization"; }),
          h.end());
  Result<std::string> token = tokens_->Token();
  if (!token.ok()) return ApiError{0, kReasonNoCredentials, token.status().message()};
  if (reauth.error && *token == reauth.refused) return *reauth.error;  // nothing fresher
  if (!token->empty()) h.emplace_back("Authorization", "Bearer " + *token);
  return std::move(token).value();
}

bool HttpApi::Reauthorize(const ApiError& error, const std::string& token, Reauth& reauth) {
  if (error.http != 401 || reauth.error || token.empty()) return false;
  tokens_->Invalidate(token);
  reauth = {token, error};
  return true;
}

bool HttpApi::Backoff(Idempotency idempotency, int attempt, const ApiError& error,
                      std::optional<std::chrono::seconds> retry_after) {
  if (attempt >= options_.retry.max_attempts || !ShouldRetry(idempotency, error)) return false;
  Clock::Duration delay = BackoffDelay(options_.retry, attempt, retry_after, jitter_->Next());
  if (deadline_ && clock_.MonotonicNow() + delay >= *deadline_) return false;  // no time to retry
  clock_.SleepFor(delay);
  return true;
}

std::optional<ApiError> HttpApi::BeginAttempt(http::ClientRequest& request,
                                              const std::string& target, bool unary) {
  if (!deadline_) {
    limiter_->Wait();
    return std::nullopt;
  }
  auto refuse = [&](const char* why) {
    return ApiError{0, kReasonDeadline, request.method + " " + target + ": " + why};
  };
  Clock::Duration wait = limiter_->Reserve();
  if (clock_.MonotonicNow() + wait >= *deadline_) return refuse("its deadline has passed");
  if (wait > Clock::Duration::zero()) clock_.SleepFor(wait);
  auto left = std::chrono::floor<std::chrono::milliseconds>(*deadline_ - clock_.MonotonicNow());
  if (left <= std::chrono::milliseconds::zero()) return refuse("its deadline has passed");
  request.total_timeout = left;
  if (unary) {
    request.target = target + (target.find('?') == std::string::npos ? "?" : "&") +
                     "timeout=" + std::to_string(left.count()) + "ms";
  }
  return std::nullopt;
}

ApiResult<Json> HttpApi::Call(http::ClientRequest request) {
  Idempotency idempotency =
      request.method == "POST" ? Idempotency::kNonIdempotent : Idempotency::kIdempotent;
  const std::string target = request.target;
  Reauth reauth;
  for (int attempt = 1;; ++attempt) {
    ApiResult<std::string> token = Authorize(request, reauth);
    if (!token.ok()) return token.error();
    if (std::optional<ApiError> late = BeginAttempt(request, target, true)) return *late;
    http::ClientResult<http::ClientResponse> r = client_->Send(request);
    ApiError error;
    std::optional<std::chrono::seconds> retry_after;
    if (r.ok() && Is2xx(r->status)) {
      if (r->body.empty()) return Json::object();
      Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
      if (json.is_discarded()) {
        return ApiError{r->status, "BadResponse",
                        request.method + " " + request.target +
                            ": the answer is not JSON: " + r->body.substr(0, 200)};
      }
      return json;
    }
    if (r.ok()) {
      error = rest::DecodeError(r->status, r->body);
      retry_after = rest::RetryAfter(http::HeaderValue(r->headers, "Retry-After"), r->body);
    } else {
      error = FromClientError(r.error());
    }
    if (Reauthorize(error, *token, reauth)) {
      --attempt;  // the try with a fresh token is not a retry
      continue;
    }
    if (!Backoff(idempotency, attempt, error, retry_after)) return error;
  }
}

ApiResult<http::BodyStreamPtr> HttpApi::OpenStream(http::ClientRequest request) {
  const std::string target = request.target;
  Reauth reauth;
  for (int attempt = 1;; ++attempt) {
    ApiResult<std::string> token = Authorize(request, reauth);
    if (!token.ok()) return token.error();
    if (std::optional<ApiError> late = BeginAttempt(request, target, false)) return *late;
    http::ClientResult<http::StreamedResponse> r = client_->Open(request);
    ApiError error;
    std::optional<std::chrono::seconds> retry_after;
    if (r.ok() && Is2xx(r->status)) return std::move(r->body);
    if (r.ok()) {
      http::ClientResult<std::string> body = http::ReadAll(*r->body, kMaxErrorBody);
      std::string text = body.ok() ? std::move(body).value() : "";
      error = rest::DecodeError(r->status, text);
      retry_after = rest::RetryAfter(http::HeaderValue(r->headers, "Retry-After"), text);
    } else {
      error = FromClientError(r.error());
    }
    if (Reauthorize(error, *token, reauth)) {
      --attempt;  // the try with a fresh token is not a retry
      continue;
    }
    if (!Backoff(Idempotency::kIdempotent, attempt, error, retry_after)) return error;
  }
}

ApiResult<Json> HttpApi::Get(const Resource& r, const std::string& ns, const std::string& name) {
  return Call(NewRequest("GET", rest::ObjectPath(r, ns, name)));
}

ApiResult<Json> HttpApi::List(const Resource& r, const std::string& ns,
                              const ListOptions& options) {
  return Call(NewRequest("GET", rest::CollectionPath(r, ns) + rest::ListQuery(options)));
}

ApiResult<Json> HttpApi::Create(const Resource& r, const std::string& ns, const Json& object) {
  return Call(WithBody("POST", rest::CollectionPath(r, ns), object));
}

ApiResult<Json> HttpApi::Replace(const Resource& r, const std::string& ns, const Json& object) {
  std::string name = NameOf(object);
  if (name.empty())
    return ApiError{400, "BadRequest", "replace " + r.plural + ": no metadata.name"};
  return Call(WithBody("PUT", rest::ObjectPath(r, ns, name), object));
}

ApiResult<Json> HttpApi::ReplaceStatus(const Resource& r, const std::string& ns,
                                       const Json& object) {
  std::string name = NameOf(object);
  if (name.empty()) {
    return ApiError{400, "BadRequest", "replace " + r.plural + "/status: no metadata.name"};
  }
  return Call(WithBody("PUT", rest::ObjectPath(r, ns, name, "status"), object));
}

ApiResult<Json> HttpApi::MergePatch(const Resource& r, const std::string& ns,
                                    const std::string& name, const Json& patch,
                                    const std::string& subresource) {
  return Call(WithBody("PATCH", rest::ObjectPath(r, ns, name, subresource), patch,
                       "application/merge-patch+json"));
}

ApiResult<Json> HttpApi::Delete(const Resource& r, const std::string& ns, const std::string& name,
                                const DeleteOptions& options) {
  return Call(WithBody("DELETE", rest::ObjectPath(r, ns, name), rest::DeleteBody(options)));
}

ApiResult<Json> HttpApi::Bind(const std::string& ns, const std::string& pod,
                              const std::string& node) {
  return Call(WithBody("POST", rest::ObjectPath(resources::kPods, ns, pod, "binding"),
                       rest::BindingBody(ns, pod, node)));
}

ApiResult<WatchStreamPtr> HttpApi::Watch(const Resource& r, const std::string& ns,
                                         const ListOptions& options) {
  int server_timeout = options.timeout_seconds > 0
                           ? options.timeout_seconds
                           : static_cast<int>(options_.watch_timeout.count());
  http::ClientRequest req =
      NewRequest("GET", rest::CollectionPath(r, ns) + rest::WatchQuery(options, server_timeout));
  req.timeout = std::chrono::seconds(server_timeout) + options_.watch_timeout_margin;
  ApiResult<http::BodyStreamPtr> body = OpenStream(std::move(req));
  if (!body.ok()) return body.error();
  return WatchStreamPtr(std::make_unique<HttpWatchStream>(std::move(body).value()));
}

ApiResult<LineStreamPtr> HttpApi::Logs(const std::string& ns, const std::string& pod,
                                       const LogOptions& options) {
  http::ClientRequest req = NewRequest(
      "GET", rest::ObjectPath(resources::kPods, ns, pod, "log") + rest::LogQuery(options));
  req.headers[0].second = "*/*";  // the log is text/plain
  if (options.follow) req.timeout = options_.follow_timeout;
  ApiResult<http::BodyStreamPtr> body = OpenStream(std::move(req));
  if (!body.ok()) return body.error();
  return LineStreamPtr(std::make_unique<HttpLineStream>(std::move(body).value()));
}

ApiResult<std::string> HttpApi::ServiceProxyGet(const std::string& ns, const std::string& service,
                                                const std::string& path,
                                                const std::string& token_header) {
  // The service's "name:port" stays as it is: names and port names need no escaping.
  http::ClientRequest req = NewRequest("GET", "/api/v1/namespaces/" + rest::PercentEncode(ns) +
                                                  "/services/" + service + "/proxy" + path);
  req.headers[0].second = "*/*";  // whatever the Service answers
  const std::string target = req.target;
  Reauth reauth;
  for (int attempt = 1;; ++attempt) {
    ApiResult<std::string> token = Authorize(req, reauth);
    if (!token.ok()) return token.error();
    if (!token_header.empty()) {
      auto& h = req.headers;
      h.erase(std::remove_if(h.begin(), h.end(),
                             [&](const auto& kv) { return kv.first == token_header; }),
              h.end());
      if (token->empty()) {
        return ApiError{0, kReasonNoToken,
                        "the kubeconfig's user has no bearer token to present to " + service};
      }
      h.emplace_back(token_header, "Bearer " + *token);
    }
    if (std::optional<ApiError> late = BeginAttempt(req, target, true)) return *late;
    http::ClientResult<http::ClientResponse> r = client_->Send(req);
    if (r.ok() && Is2xx(r->status)) return std::move(r->body);
    ApiError error = r.ok() ? rest::DecodeError(r->status, r->body) : FromClientError(r.error());
    std::optional<std::chrono::seconds> retry_after;
    if (r.ok())
      retry_after = rest::RetryAfter(http::HeaderValue(r->headers, "Retry-After"), r->body);
    if (Reauthorize(error, *token, reauth)) {
      --attempt;  // the try with a fresh token is not a retry
      continue;
    }
    if (!Backoff(Idempotency::kIdempotent, attempt, error, retry_after)) return error;
  }
}

Result<http::ClientPtr> MakeHttpClient(const Config& config,
                                       std::chrono::milliseconds default_timeout) {
  http::ClientOptions o;
  o.base_url = config.server;
  o.default_timeout = default_timeout;
  o.ca_pem = config.ca_data;
  o.client_cert_pem = config.client_cert_data;
  o.client_key_pem = config.client_key_data;
  o.insecure_skip_tls_verify = config.insecure_skip_tls_verify;
  o.tls_server_name = config.tls_server_name;
  // kubectl's order: the cluster's proxy-url, else the proxy the environment names for the server.
  o.proxy_url = config.proxy_url;
  if (o.proxy_url.empty()) {
    Result<std::string> proxy = http::ProxyFromEnvironment(config.server);
    if (!proxy.ok()) return proxy.status().WithContext(config.source);
    o.proxy_url = *proxy;
  }
  Result<std::unique_ptr<http::SocketClient>> client = http::SocketClient::Create(o);
  if (!client.ok()) return client.status().WithContext(config.source);
  return http::ClientPtr(std::move(client).value());
}

Result<std::unique_ptr<Api>> MakeApi(const Config& config, ApiOptions options) {
  Clock& clock = options.clock ? *options.clock : RealClock();
  Config loaded = config;
  if (Status s = ReadReferencedFiles(loaded); !s.ok()) return s;
  TokenSourcePtr tokens;
  if (loaded.exec.enabled()) {
    ExecTokenSource::Fetch fetch = [loaded, exec = options.exec, &clock] {
      return RunExecPlugin(loaded, exec, clock);
    };
    Result<ExecCredential> first = fetch();
    if (!first.ok()) return first.status();
    loaded.client_cert_data = first->client_cert_data;
    loaded.client_key_data = first->client_key_data;
    if (first->token.empty()) {
      // Only a certificate: running the plugin again is no use, a new one could not be swapped in.
      tokens = std::make_unique<StaticTokenSource>("");
    } else {
      tokens = std::make_unique<ExecTokenSource>(std::move(fetch), clock, std::move(first).value());
    }
  } else {
    tokens = MakeTokenSource(loaded, clock, options.token_refresh);
  }
  Result<http::ClientPtr> client = MakeHttpClient(loaded, options.request_timeout);
  if (!client.ok()) return client.status();
  return std::unique_ptr<Api>(
      std::make_unique<HttpApi>(std::move(client).value(), std::move(tokens), options, clock));
}

}  // namespace dljob::kube
