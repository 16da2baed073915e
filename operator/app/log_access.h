// LogAccess: who may read a job's archived log through the operator's /logs endpoint — decided as
// kube-rbac-proxy decides it, by asking the API server.
//
// A request must carry a bearer token (Authorization: Bearer <token>, or kLogTokenHeader when it
// came through the API server's service proxy, which keeps the user's own Authorization header
// to itself: see docs/tasks/cluster.md). The token is reviewed with a TokenReview
// (authentication.k8s.io/v1): not authenticated → 401. The reviewed user and groups (and extra)
// are then checked with a SubjectAccessReview (authorization.k8s.io/v1) for verb `get` on
// resource `pods`, subresource `log`, in the job's namespace — the permission `kubectl logs`
// needs, so a user reads exactly the logs Kubernetes would let them read: not allowed → 403,
// naming the user, the verb, the resource and the namespace. An API server that cannot answer is
// a 503 (try again), never an allow.
//
// Decisions are cached for `ttl` (default 30 s), keyed by the SHA-256 of the token (never the
// token itself) and the namespace; a review that failed to reach the server is not cached.
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "kube/api.h"

namespace dljob::op {

// The header `dljob logs` sends the user's token in through the API server's service proxy.
inline constexpr char kLogTokenHeader[] = "X-Dljob-Authorization";

struct AccessDecision {
  int status = 200;     // 200 allowed, 401, 403, 503
  std::string message;  // why not, for the response body
  std::string user;     // the reviewed user, when authenticated
};

// The bearer token of an Authorization (or kLogTokenHeader) value "Bearer <token>"; "" otherwise.
std::string BearerToken(const std::string& header_value);

class LogAccess {
 public:
  // `api` (the operator's own client, unfenced: standbys serve /logs too) and `clock` must
  // outlive it.
  LogAccess(kube::Api& api, const Clock& clock,
            std::chrono::seconds ttl = std::chrono::seconds(30));

  // May the bearer of `token` ("" when the request had none) read logs in namespace `ns`?
  AccessDecision Check(const std::string& token, const std::string& ns);

 private:
  AccessDecision Review(const std::string& token, const std::string& ns);

  kube::Api& api_;
  const Clock& clock_;
  const std::chrono::seconds ttl_;
  struct Cached {
    AccessDecision decision;
    Clock::MonotonicTime until;
  };
  Mutex mu_;
  std::map<std::string, Cached> cache_ GUARDED_BY(mu_);  // "<sha256 hex>/<ns>"
};

}  // namespace dljob::op
