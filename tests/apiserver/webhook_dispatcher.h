// WebhookDispatcher: calls the validating admission webhooks of the stored
// ValidatingWebhookConfigurations for one client write, as the real API server's
// ValidatingAdmissionWebhook plugin does, and ServiceRoutes, where the test server sends calls to
// a webhook named by a Service.
//
// Which webhooks match and what the exchange says are webhook_config.h's and
// admission_review.h's. This file does the I/O: configurations in name order and each one's
// webhooks in order, one at a time (the real server calls them in parallel and answers the first
// refusal it gets; here the first refusal in that order wins and the later webhooks are not
// called). Each call is an HTTPS POST (http/socket_client.h) of the AdmissionReview to
//   - clientConfig.url: its host, the certificate checked against that host; or
//   - clientConfig.service: "https://<name>.<namespace>.svc:<port><path>", the certificate checked
//     against the name <name>.<namespace>.svc as on a real cluster, while the connection goes to
//     the address ServiceRoutes gives (the test server has no cluster network);
// trusting exactly clientConfig.caBundle (the system's roots when it is empty), with
// "?timeout=<timeoutSeconds>s" on the path and timeoutSeconds as the limit of the whole call.
// A call that fails (refused, timed out, a TLS failure, an answer that is not a valid review)
// refuses the write under failurePolicy Fail — 500 "Internal error occurred: failed calling
// webhook \"<name>\": failed to call webhook: Post \"<url>\": <why>", with Go's words for
// the common causes (connection refused, context deadline exceeded, tls: failed to verify
// certificate) — and is skipped under Ignore.
//
// Service routes: a call to service <name>.<namespace> port P goes to the address set for it
// (Set(), --service-route on the command line, POST /_test/services), else to 127.0.0.1:P.
//
// The dispatcher never holds the store's lock while it calls out (it reads the configurations and
// namespaces through the store's public methods), so a webhook may read the API server itself.
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "base/status.h"
#include "tests/apiserver/admission_review.h"
#include "tests/apiserver/object_store.h"
#include "tests/apiserver/webhook_config.h"

namespace dljob::apiserver {

class ServiceRoutes {
 public:
  // Calls to service `name` in `ns` on `port` go to `address` ("127.0.0.1:8443"); port 0 routes
  // every port of the service. An empty address removes the route.
  void Set(const std::string& ns, const std::string& name, int port, const std::string& address);
  // "ns/name[:port]=host:port" (the --service-route flag); kInvalidArgument naming the part that
  // is wrong.
  Status SetFromFlag(const std::string& flag);
  // Where a call to the service's `port` goes.
  std::string Resolve(const std::string& ns, const std::string& name, int port) const;

 private:
  mutable Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, std::string> routes_ GUARDED_BY(mu_);
};

class WebhookDispatcher {
 public:
  // Reads configurations and namespaces from `store`; both must outlive the dispatcher.
  WebhookDispatcher(const ObjectStore& store, const ServiceRoutes& routes);

  // Whether any ValidatingWebhookConfiguration is stored (when none, writes skip the review).
  bool Active() const;
  // Sends the review of `request` to every webhook that matches it. Returns the refusal, if any
  // (`details` then holds its Status details, or null); the webhooks' warnings are appended to
  // `warnings` either way.
  std::optional<ApiError> Review(const AdmissionAttributes& request, const ReviewContext& context,
                                 std::vector<std::string>* warnings, nlohmann::json* details) const;

 private:
  // One exchange with `hook`; never throws.
  WebhookVerdict Call(const ValidatingWebhook& hook, const std::string& uid,
                      const std::string& version, const nlohmann::json& review) const;
  std::string NewUid() const;

  const ObjectStore& store_;
  const ServiceRoutes& routes_;
  mutable Mutex mu_;
  mutable std::mt19937_64 uids_ GUARDED_BY(mu_);
};

}  // namespace dljob::apiserver
