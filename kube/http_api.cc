// See http_api.h.
#include "kube/http_api.h"

#include <algorithm>

#include "kube/cpprest_transport.h"
#include "kube/http_streams.h"
#include "kube/rest.h"

namespace dljob::kube {

namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;

bool Is2xx(int status) { return status >= 200 && status < 300; }

}  // namespace

HttpApi::HttpApi(TransportPtr transport, TokenSourcePtr tokens, const ApiOptions& options,
                 Clock& clock)
    : transport_(std::move(transport)),
      tokens_(std::move(tokens)),
      options_(options),
      clock_(clock),
      limiter_(options.qps, options.burst, clock),
      jitter_(options.retry.seed) {}

Request HttpApi::NewRequest(std::string method, std::string path_and_query) const {
  Request req;
  req.method = std::move(method);
  req.path_and_query = std::move(path_and_query);
  req.headers = {{"Accept", "application/json"}, {"User-Agent", options_.user_agent}};
  req.timeout = options_.request_timeout;
  return req;
}

Request HttpApi::WithBody(std::string method, std::string path, const Json& body,
                          const char* content_type) const {
  Request req = NewRequest(std::move(method), std::move(path));
  req.headers.emplace_back("Content-Type", content_type);
  req.body = body.dump();
  return req;
}

void HttpApi::Authorize(Request& request) {
  auto& h = request.headers;
  h.erase(std::remove_if(h.begin(), h.end(),
                         [](const auto& kv) { return kv.first == "Authorization"; }),
          h.end());
  if (std::string token = tokens_->Token(); !token.empty()) {
    h.emplace_back("Authorization", "Bearer " + token);
  }
}

bool HttpApi::Backoff(Idempotency idempotency, int attempt, const ApiError& error,
                      std::optional<std::chrono::seconds> retry_after) {
  if (attempt >= options_.retry.max_attempts || !ShouldRetry(idempotency, error)) return false;
  clock_.SleepFor(BackoffDelay(options_.retry, attempt, retry_after, jitter_.Next()));
  return true;
}

ApiResult<Json> HttpApi::Call(Request request) {
  Idempotency idempotency =
      request.method == "POST" ? Idempotency::kNonIdempotent : Idempotency::kIdempotent;
  for (int attempt = 1;; ++attempt) {
    limiter_.Wait();
    Authorize(request);
    ApiResult<Response> r = transport_->Send(request);
    ApiError error;
    std::optional<std::chrono::seconds> retry_after;
    if (r.ok() && Is2xx(r->status)) {
      if (r->body.empty()) return Json::object();
      Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
      if (json.is_discarded()) {
        return ApiError{r->status, "BadResponse",
                        request.method + " " + request.path_and_query +
                            ": the answer is not JSON: " + r->body.substr(0, 200)};
      }
      return json;
    }
    if (r.ok()) {
      error = rest::DecodeError(r->status, r->body);
      retry_after = rest::RetryAfter(FindHeader(r->headers, "Retry-After"), r->body);
    } else {
      error = r.error();
    }
    if (!Backoff(idempotency, attempt, error, retry_after)) return error;
  }
}

ApiResult<BodyStreamPtr> HttpApi::OpenStream(Request request) {
  for (int attempt = 1;; ++attempt) {
    limiter_.Wait();
    Authorize(request);
    ApiResult<StreamResponse> r = transport_->Open(request);
    ApiError error;
    std::optional<std::chrono::seconds> retry_after;
    if (r.ok() && Is2xx(r->status)) return std::move(r->body);
    if (r.ok()) {
      ApiResult<std::string> body = ReadAll(*r->body, kMaxErrorBody);
      std::string text = body.ok() ? std::move(body).value() : "";
      error = rest::DecodeError(r->status, text);
      retry_after = rest::RetryAfter(FindHeader(r->headers, "Retry-After"), text);
    } else {
      error = r.error();
    }
    if (!Backoff(Idempotency::kIdempotent, attempt, error, retry_after)) return error;
  }
}

std::string HttpApi::ObjectName(const Json& object) const {
  if (!object.is_object() || !object.contains("metadata")) return "";
  const Json& meta = object["metadata"];
  if (!meta.is_object() || !meta.contains("name") || !meta["name"].is_string()) return "";
  return meta["name"].get<std::string>();
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
  std::string name = ObjectName(object);
  if (name.empty()) return ApiError{400, "BadRequest", "replace " + r.plural + ": no metadata.name"};
  return Call(WithBody("PUT", rest::ObjectPath(r, ns, name), object));
}

ApiResult<Json> HttpApi::ReplaceStatus(const Resource& r, const std::string& ns,
                                       const Json& object) {
  std::string name = ObjectName(object);
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
  Request req = NewRequest("GET", rest::CollectionPath(r, ns) + rest::WatchQuery(options, server_timeout));
  req.timeout = std::chrono::seconds(server_timeout) + options_.watch_timeout_margin;
  ApiResult<BodyStreamPtr> body = OpenStream(std::move(req));
  if (!body.ok()) return body.error();
  return WatchStreamPtr(std::make_unique<HttpWatchStream>(std::move(body).value()));
}

ApiResult<LineStreamPtr> HttpApi::Logs(const std::string& ns, const std::string& pod,
                                       const LogOptions& options) {
  Request req =
      NewRequest("GET", rest::ObjectPath(resources::kPods, ns, pod, "log") + rest::LogQuery(options));
  req.headers[0].second = "*/*";  // the log is text/plain
  if (options.follow) req.timeout = options_.follow_timeout;
  ApiResult<BodyStreamPtr> body = OpenStream(std::move(req));
  if (!body.ok()) return body.error();
  return LineStreamPtr(std::make_unique<HttpLineStream>(std::move(body).value()));
}

Result<std::unique_ptr<Api>> MakeApi(const Config& config, ApiOptions options) {
  Clock& clock = options.clock ? *options.clock : RealClock();
  Config loaded = config;
  if (Status s = ReadReferencedFiles(loaded); !s.ok()) return s;
  auto transport = CpprestTransport::Create(loaded, options.request_timeout);
  if (!transport.ok()) return transport.status();
  TokenSourcePtr tokens = MakeTokenSource(loaded, clock, options.token_refresh);
  return std::unique_ptr<Api>(
      std::make_unique<HttpApi>(std::move(transport).value(), std::move(tokens), options, clock));
}

}  // namespace dljob::kube
