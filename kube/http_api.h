// HttpApi: the Api over HTTP — what the operator uses to talk to a real API server.
//
// Each call becomes one http::ClientRequest (http/client.h; paths and queries from rest.h) with
// Accept: application/json, a User-Agent and, when the TokenSource has one, Authorization: Bearer
// <token> (asked for on every attempt, so a rotated service-account token is picked up). Every
// attempt first waits on the RateLimiter (token bucket, qps/burst). Non-2xx answers become
// ApiErrors (rest::DecodeError). A 401 Unauthorized invalidates the token sent
// (TokenSource::Invalidate) and the call is sent once more, at once, if the source then has a
// different token (a credential plugin run again, a token file re-read); that extra try is not
// one of the retry attempts, and is made for POST too (the server refused before acting). When
// the TokenSource fails (a credential plugin that cannot run), the call fails unsent with an
// ApiError of reason kReasonNoCredentials carrying the plugin's message, without retries. Failed
// attempts are retried per retry.h: GET, PUT, PATCH, DELETE and the opening of watches and logs are
// idempotent; POST (Create, Bind) is retried only when it certainly never reached the server
// (connection refused) or was refused with 429. Waits go through the injected Clock and honour
// Retry-After. MergePatch sends application/merge-patch+json.
//
// Watch() asks the server for timeoutSeconds (the caller's, or ApiOptions::watch_timeout) and
// gives the transport an inactivity limit watch_timeout_margin longer, so a healthy watch is
// always ended by the server (Next() → std::nullopt) rather than by a client timeout. Events are
// decoded however the chunks fall; a 410 — as the answer or as an ERROR event — is an ApiError
// that IsGone(). Logs() returns a LineStream; a followed log may stay quiet for up to
// follow_timeout before the stream reports a Timeout error (the caller then re-opens it). A
// connection whose peer is gone is found sooner, by TCP keepalive (http/client_connection.h):
// the limit is for a server that keeps the connection but stops sending, so it is long (a quiet
// training job's log is not opened again every few minutes; kubectl logs -f has no limit).
//
// WithDeadline (api.h) returns an HttpApi sharing this one's client, tokens, rate limiter and
// jitter, whose every attempt is fitted into the time left: none starts once the deadline is
// reached (nor when the rate limiter's wait would reach it), the attempt's total_timeout
// (http/client.h) is the time left, a unary request carries it as `timeout=<ms>ms`, which
// kube-apiserver honours (its request-deadline filter answers 504 and drops the request when the
// time runs out), and a backoff that would reach the deadline ends the retries with the last
// error. request_timeout stays the inactivity limit, so connections stay pooled.
//
// Thread-safety: all methods may be called from many threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "http/client.h"
#include "kube/api.h"
#include "kube/config.h"
#include "kube/exec_plugin.h"
#include "kube/retry.h"
#include "kube/token_source.h"

namespace dljob::kube {

struct ApiOptions {
  double qps = 50;  // client-go's default (5) is too slow for an operator creating many pods
  int burst = 100;
  RetryOptions retry;
  std::chrono::milliseconds request_timeout{30'000};
  std::chrono::seconds watch_timeout{300};  // timeoutSeconds asked of the server by default
  std::chrono::seconds watch_timeout_margin{30};
  std::chrono::seconds follow_timeout{3600};
  std::string user_agent = "dljob-operator";
  std::chrono::seconds token_refresh{60};
  ExecOptions exec;        // kubeconfig credential plugins (exec_plugin.h)
  Clock* clock = nullptr;  // RealClock() when null; must outlive the Api
};

class HttpApi : public Api {
 public:
  // `clock` waits out backoffs and paces the rate limiter; it must outlive this object.
  HttpApi(http::ClientPtr client, TokenSourcePtr tokens, const ApiOptions& options, Clock& clock);

  ApiResult<Json> Get(const Resource& r, const std::string& ns, const std::string& name) override;
  ApiResult<Json> List(const Resource& r, const std::string& ns,
                       const ListOptions& options) override;
  ApiResult<Json> Create(const Resource& r, const std::string& ns, const Json& object) override;
  ApiResult<Json> Replace(const Resource& r, const std::string& ns, const Json& object) override;
  ApiResult<Json> ReplaceStatus(const Resource& r, const std::string& ns,
                                const Json& object) override;
  ApiResult<Json> MergePatch(const Resource& r, const std::string& ns, const std::string& name,
                             const Json& patch, const std::string& subresource = "") override;
  ApiResult<Json> Delete(const Resource& r, const std::string& ns, const std::string& name,
                         const DeleteOptions& options = {}) override;
  ApiResult<WatchStreamPtr> Watch(const Resource& r, const std::string& ns,
                                  const ListOptions& options) override;
  ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                       const std::string& node) override;
  ApiResult<LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                const LogOptions& options) override;
  ApiResult<std::string> ServiceProxyGet(const std::string& ns, const std::string& service,
                                         const std::string& path,
                                         const std::string& token_header) override;
  std::unique_ptr<Api> WithDeadline(Clock::MonotonicTime deadline) override;

 private:
  HttpApi(const HttpApi& base, Clock::MonotonicTime deadline);  // WithDeadline's view
  http::ClientRequest NewRequest(std::string method, std::string target) const;
  http::ClientRequest WithBody(std::string method, std::string path, const Json& body,
                               const char* content_type = "application/json") const;
  // Sends with rate limiting and retries; decodes a 2xx JSON body or the error.
  ApiResult<Json> Call(http::ClientRequest request);
  // Opens a streamed response with rate limiting and retries; non-2xx answers are errors.
  ApiResult<http::BodyStreamPtr> OpenStream(http::ClientRequest request);
  // Decides whether to go on after failed attempt `attempt`; sleeps the backoff if so.
  bool Backoff(Idempotency idempotency, int attempt, const ApiError& error,
               std::optional<std::chrono::seconds> retry_after);

  // One call's state of re-authorization after a 401.
  struct Reauth {
    std::string refused;            // the token the server refused
    std::optional<ApiError> error;  // its 401 answer, once there was one
  };
  // Sets the Authorization header and returns the token sent. An error when the source has no
  // token to give (kReasonNoCredentials), or only the one the server refused already (that 401).
  ApiResult<std::string> Authorize(http::ClientRequest& request, const Reauth& reauth);
  // After a failed attempt: true when it was the call's first 401, so the token is invalidated
  // and the call is worth sending once more.
  bool Reauthorize(const ApiError& error, const std::string& token, Reauth& reauth);
  // Waits for the rate limiter and, under a deadline, fits the attempt into the time left
  // (`target`: the request's own, before any `timeout`); the error when no time is left.
  std::optional<ApiError> BeginAttempt(http::ClientRequest& request, const std::string& target,
                                       bool unary);

  std::shared_ptr<http::Client> client_;
  std::shared_ptr<TokenSource> tokens_;
  const ApiOptions options_;
  Clock& clock_;
  std::shared_ptr<RateLimiter> limiter_;
  std::shared_ptr<Jitter> jitter_;
  std::optional<Clock::MonotonicTime> deadline_;  // set in WithDeadline's views
};

// The HTTP client (http/socket_client.h) for `config`'s server: its CA bundle, client certificate
// and key, insecure-skip-tls-verify. Referenced files must have been read (ReadReferencedFiles).
// Errors name the config (config.source) and what in it is wrong.
Result<http::ClientPtr> MakeHttpClient(
    const Config& config, std::chrono::milliseconds default_timeout = std::chrono::seconds(30));

// An HttpApi over MakeHttpClient(config), with its token source (a token file is re-read every
// options.token_refresh). With a credential plugin (config.exec), the plugin runs once here: a
// client certificate it returns goes into the TLS settings (a rotated certificate is only picked
// up by a new Api: restart the program), and its token is the first of an ExecTokenSource that
// runs the plugin again when the token expires or is refused. Errors name the config field that
// is wrong, or the plugin and how it failed.
Result<std::unique_ptr<Api>> MakeApi(const Config& config, ApiOptions options = {});

}  // namespace dljob::kube
