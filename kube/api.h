// kube::Api — what dljob needs from a Kubernetes API server, as one small interface.
//
// Objects travel as Kubernetes JSON (nlohmann::json), exactly as the server sends and receives
// them; typed views live with their users (jobs/ decodes DLJobs, controller/ reads pods). Two
// implementations: HttpApi (kube/http_api.h), which speaks REST over an HTTP client
// (http/client.h; socket_client.h in production), and the test API server's in-process handle
// (tests/apiserver/).
//
// Errors are values: every call returns ApiResult<T>, which holds either the value or an
// ApiError carrying the HTTP status the server answered (0 for a transport failure: refused,
// reset, timed out) and its Status reason ("NotFound", "Conflict", "Expired", …). Callers branch on
// the predicates (IsNotFound, IsConflict, …), never on message text.
//
// A call may be bounded by a deadline (WithDeadline): the leader's calls are, by the end of its
// lease's acting window (kube/runtime/fenced_api.h), so that none of them can be applied after a
// standby may have taken over.
//
// Thread-safety: implementations are safe to call from many threads at once. A WatchStream or
// LineStream belongs to one reader thread at a time; Cancel() may be called from any thread and
// makes a blocked Next() return promptly.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/readiness.h"
#include "base/status.h"

namespace dljob::kube {

using Json = nlohmann::json;

// A resource type as the REST paths name it: /api/v1/namespaces/{ns}/pods or
// /apis/{group}/{version}/namespaces/{ns}/{plural}.
struct Resource {
  std::string group;    // "" for the core group
  std::string version;  // "v1", "v1alpha1"
  std::string plural;   // "pods", "dljobs"
  bool namespaced = true;
  std::string kind;  // "Pod"; for messages and for objects built without one

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// The resources dljob uses (defined in api.cc).
namespace resources {
extern const Resource kPods;
extern const Resource kServices;
extern const Resource kConfigMaps;
extern const Resource kSecrets;
extern const Resource kEvents;
extern const Resource kNodes;
extern const Resource kLeases;       // coordination.k8s.io/v1
extern const Resource kDeployments;  // apps/v1: the operator's own (operator/app/self_budget.h)
// policy/v1 (Kubernetes 1.21+) and policy/v1beta1 (up to 1.24; the only one before 1.21).
extern const Resource kPodDisruptionBudgets;
extern const Resource kPodDisruptionBudgetsV1beta1;
extern const Resource kDLJobs;    // dljob.io/v1alpha1
extern const Resource kDLQueues;  // dljob.io/v1alpha1, cluster-scoped
}  // namespace resources

// An error answer from the server (a metav1.Status body) or a transport failure (http == 0).
struct ApiError {
  int http = 0;
  std::string reason;  // metav1.Status reason: NotFound, AlreadyExists, Conflict, Expired, …
  std::string message;

  bool IsNotFound() const { return http == 404; }
  bool IsAlreadyExists() const { return http == 409 && reason == "AlreadyExists"; }
  bool IsConflict() const { return http == 409 && reason != "AlreadyExists"; }
  bool IsGone() const { return http == 410; }  // resourceVersion too old: re-list
  bool IsInvalid() const { return http == 422; }
  // Worth retrying after a backoff: transport failures, 429 and 5xx.
  bool IsRetryable() const { return http == 0 || http == 429 || http >= 500; }

  // "<http> <reason>: <message>", or "connection failed: <message>" for http == 0 (the message
  // alone for kReasonNoCredentials).
  std::string ToString() const;
  Status ToStatus() const;
};

// The reasons of transport failures (ApiError with http == 0): why no HTTP answer arrived.
inline constexpr const char* kReasonConnectFailed = "ConnectFailed";  // request never sent
inline constexpr const char* kReasonTimeout = "Timeout";
inline constexpr const char* kReasonCancelled = "Cancelled";
inline constexpr const char* kReasonTransportError = "TransportError";  // reset, TLS, protocol
// No request was sent: there was no credential to send it with (a kubeconfig credential plugin
// failed; the message says how). ToString() is then the message alone.
inline constexpr const char* kReasonNoCredentials = "NoCredentials";
// ServiceProxyGet was to pass on the caller's bearer token and the caller has none.
inline constexpr const char* kReasonNoToken = "NoBearerToken";
inline constexpr const char* kReasonUnsupported = "Unsupported";
// Not sent: the call's deadline had passed (Api::WithDeadline), or this replica may no longer act
// (kube/runtime/fenced_api.h). The message says which.
inline constexpr const char* kReasonDeadline = "DeadlineExceeded";

// A value or an ApiError (base/status.h's Result). status() is the error's ToStatus().
template <typename T>
using ApiResult = Result<T, ApiError>;

struct ListOptions {
  std::string label_selector;    // "dljob.io/job-name=x,dljob.io/role in (worker)"
  std::string field_selector;    // "spec.nodeName=node-1"
  std::string resource_version;  // list: "" = most recent; watch: start after this version
  int64_t limit = 0;             // page size; 0 = everything in one answer
  std::string continue_token;    // from the previous page's metadata.continue
  int timeout_seconds = 0;  // watch: the server ends the stream after this long (0 = its default)
  bool allow_bookmarks = true;  // watch: ask for BOOKMARK events
};

struct DeleteOptions {
  std::string propagation_policy = "Background";  // Foreground | Background | Orphan
  std::string precondition_uid;                   // delete only this incarnation of the object
  std::optional<int64_t> grace_period_seconds;
};

struct LogOptions {
  std::string container;
  bool follow = false;
  std::optional<int64_t> since_seconds;
  std::optional<int64_t> tail_lines;
  // Each line starts with the time the container wrote it and a space
  // ("2026-11-27T08:50:42.123456789Z text"), as kubectl logs --timestamps shows; see
  // kube/log_timestamp.h.
  bool timestamps = false;
};

// One event of a watch, as the server sends it: {"type": "...", "object": {...}}.
struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  Json object;  // for kError: a metav1.Status (code 410 means re-list)
};

// A watch in progress. Next() blocks until the next event; it returns std::nullopt when the
// server ended the stream normally (its timeoutSeconds passed: the caller re-watches from the
// last resourceVersion it saw), and an ApiError when the connection broke.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  virtual ApiResult<std::optional<WatchEvent>> Next() = 0;
  virtual void Cancel() = 0;
};
using WatchStreamPtr = std::unique_ptr<WatchStream>;

// What a read of a LineStream that does not wait found: a line, the end, or neither yet.
struct ReadyLine {
  std::optional<std::string> line;
  bool end = false;
  Readiness wait;  // neither: what to wait for before trying again (base/readiness.h)
};

// A pod's log, line by line (without the trailing newline). With LogOptions::follow, Next()
// waits for new lines until the container ends; std::nullopt marks the end of the log.
class LineStream {
 public:
  virtual ~LineStream() = default;
  virtual ApiResult<std::optional<std::string>> Next() = 0;
  // Next() without waiting, for one thread that follows many logs. An error after the
  // stream's inactivity limit (ReadyLine::wait.until) passed with nothing, as Next() would.
  // The default calls Next(): right only for a stream whose Next() never waits (a log
  // already complete); one that can wait overrides it.
  virtual ApiResult<ReadyLine> TryNext();
  virtual void Cancel() = 0;
};
using LineStreamPtr = std::unique_ptr<LineStream>;

class Api {
 public:
  virtual ~Api() = default;

  // `ns` is ignored for cluster-scoped resources; "" lists across all namespaces.
  virtual ApiResult<Json> Get(const Resource& r, const std::string& ns,
                              const std::string& name) = 0;
  // One page: a List object with metadata.resourceVersion and, when more remain,
  // metadata.continue. ListAll() below follows the pages.
  virtual ApiResult<Json> List(const Resource& r, const std::string& ns,
                               const ListOptions& options) = 0;
  virtual ApiResult<Json> Create(const Resource& r, const std::string& ns, const Json& object) = 0;
  // PUT of the whole object; 409 Conflict when metadata.resourceVersion is stale.
  virtual ApiResult<Json> Replace(const Resource& r, const std::string& ns, const Json& object) = 0;
  // PUT to the status subresource: only .status changes.
  virtual ApiResult<Json> ReplaceStatus(const Resource& r, const std::string& ns,
                                        const Json& object) = 0;
  // RFC 7386 JSON merge patch, to the object or to a subresource ("status").
  virtual ApiResult<Json> MergePatch(const Resource& r, const std::string& ns,
                                     const std::string& name, const Json& patch,
                                     const std::string& subresource = "") = 0;
  // Returns the server's answer body (the object, or a Status).
  virtual ApiResult<Json> Delete(const Resource& r, const std::string& ns, const std::string& name,
                                 const DeleteOptions& options = {}) = 0;
  virtual ApiResult<WatchStreamPtr> Watch(const Resource& r, const std::string& ns,
                                          const ListOptions& options) = 0;
  // POST pods/{pod}/binding with target {kind: Node, name: node}.
  virtual ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                               const std::string& node) = 0;
  virtual ApiResult<LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                        const LogOptions& options) = 0;
  // GET `path` ("/logs/a/b") of Service `service` ("name" or "name:port") in `ns` through the
  // API server's service proxy (/api/v1/namespaces/{ns}/services/{service}/proxy{path}); the
  // answer's body as text, a non-2xx answer (the server's or the Service's) as an ApiError. The
  // API server authenticates the caller and keeps its Authorization header to itself; with
  // `token_header` set, the caller's bearer token also goes to the Service, in that header
  // ("Bearer <token>"), and a caller without one (a client certificate) gets kReasonNoToken,
  // nothing sent. The default answers kReasonUnsupported (implementations without HTTP).
  virtual ApiResult<std::string> ServiceProxyGet(const std::string& ns, const std::string& service,
                                                 const std::string& path,
                                                 const std::string& token_header);

  // A view of this Api whose calls all end by `deadline`, a time of the monotonic clock this Api
  // waits on (Clock::MonotonicNow): no attempt starts at or after it (the call fails with reason
  // kReasonDeadline, nothing sent), an attempt gets only the time left and a backoff that would
  // reach it ends the retries; a request that is not a watch or a followed log also carries the
  // time left as the API server's `timeout` parameter, so that the server does not apply it
  // later either. Watch() and Logs() are bounded until their stream opens, not while it streams.
  // A view of a view keeps the earlier deadline. The view borrows this Api, which must outlive
  // it (streams it opened need neither), and is as thread-safe as this Api.
  //
  // The default view forwards every call unbounded: right only for implementations whose calls
  // never wait (in-memory fakes). HttpApi, and every implementation that does I/O, overrides it.
  virtual std::unique_ptr<Api> WithDeadline(Clock::MonotonicTime deadline);
};

// Lists every page (following metadata.continue) into one List whose metadata.resourceVersion
// is the first page's, the version a watch continues from.
ApiResult<Json> ListAll(Api& api, const Resource& r, const std::string& ns,
                        ListOptions options = {});

// Lists every page as ListAll does, handing each item to `take` as its page arrives, so a caller
// that keeps less than the whole object (an informer's transform) never holds the whole list:
// one page at a time. Returns the first page's resourceVersion. On an error, the items of the
// pages before it have been taken.
ApiResult<std::string> ListEach(Api& api, const Resource& r, const std::string& ns,
                                ListOptions options, const std::function<void(Json&&)>& take);

}  // namespace dljob::kube
