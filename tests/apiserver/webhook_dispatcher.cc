// See webhook_dispatcher.h.
#include "tests/apiserver/webhook_dispatcher.h"

#include <chrono>
#include <cstdio>

#include "base/json_fields.h"
#include "http/socket_client.h"
#include "kube/object_fields.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

constexpr char kConfigurationsKey[] =
    "validatingwebhookconfigurations.admissionregistration.k8s.io";

// Where one call goes, and how the real server would name it in messages.
struct Endpoint {
  std::string address;      // host:port connected to
  std::string server_name;  // the name the certificate must hold ("" = the address's host)
  std::string url;          // the URL as the real server prints it, without the query
  std::string path;
};

Endpoint EndpointOf(const ValidatingWebhook& hook, const ServiceRoutes& routes) {
  Endpoint e;
  if (hook.service) {
    const WebhookService& s = *hook.service;
    e.address = routes.Resolve(s.ns, s.name, s.port);
    e.server_name = s.name + "." + s.ns + ".svc";
    e.path = s.path.empty() ? "/" : s.path;
    e.url = "https://" + e.server_name + ":" + std::to_string(s.port) + e.path;
    return e;
  }
  const std::string& url = hook.url.value_or("");
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t slash = url.find('/', start);
  e.address = url.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
  e.path = slash == std::string::npos ? "/" : url.substr(slash);
  e.url = url.substr(0, start) + e.address + e.path;
  if (e.address.find(':') == std::string::npos || e.address.back() == ']') e.address += ":443";
  return e;
}

// Go's words for why a request got no answer.
std::string GoNetError(const http::ClientError& error, const std::string& address) {
  switch (error.failure) {
    case http::Failure::kTimeout:
      return "context deadline exceeded";
    case http::Failure::kConnectFailed:
      return "dial tcp " + address + ": connect: connection refused";
    default:
      break;
  }
  std::string what = error.message.substr(error.message.find(": ") + 2);
  for (const char* tls : {"certificate", "handshake", "SSL", "ssl", "TLS", "tls"}) {
    if (what.find(tls) != std::string::npos) {
      return "tls: failed to verify certificate: " + what;
    }
  }
  return what;
}

const Json& NamespaceLabels(const ObjectStore& store, const std::string& ns, Json* holder) {
  static const Json kNone;
  if (ns.empty()) return kNone;
  for (const ObjectPtr& n : store.Snapshot("namespaces", "").first) {
    if (kube::NameOf(*n) == ns) {
      *holder = kube::LabelsOf(*n);
      return *holder;
    }
  }
  return kNone;
}

}  // namespace

void ServiceRoutes::Set(const std::string& ns, const std::string& name, int port,
                        const std::string& address) {
  MutexLock lock(mu_);
  if (address.empty()) {
    routes_.erase({ns, name, port});
  } else {
    routes_[{ns, name, port}] = address;
  }
}

Status ServiceRoutes::SetFromFlag(const std::string& flag) {
  size_t eq = flag.find('=');
  size_t slash = flag.find('/');
  if (eq == std::string::npos || slash == std::string::npos || slash > eq || slash == 0) {
    return Status::InvalidArgument("--service-route " + flag +
                                   ": want <namespace>/<name>[:<port>]=<host>:<port>");
  }
  std::string ns = flag.substr(0, slash);
  std::string service = flag.substr(slash + 1, eq - slash - 1);
  std::string address = flag.substr(eq + 1);
  int port = 0;
  if (size_t colon = service.find(':'); colon != std::string::npos) {
    try {
      port = std::stoi(service.substr(colon + 1));
    } catch (...) {
      port = -1;
    }
    service.resize(colon);
    if (port < 1 || port > 65535) {
      return Status::InvalidArgument("--service-route " + flag +
                                     ": the port is not a number "
                                     "from 1 to 65535");
    }
  }
  if (service.empty() || address.find(':') == std::string::npos) {
    return Status::InvalidArgument("--service-route " + flag +
                                   ": want <namespace>/<name>[:<port>]=<host>:<port>");
  }
  Set(ns, service, port, address);
  return Status::Ok();
}

std::string ServiceRoutes::Resolve(const std::string& ns, const std::string& name, int port) const {
  MutexLock lock(mu_);
  if (auto it = routes_.find({ns, name, port}); it != routes_.end()) return it->second;
  if (auto it = routes_.find({ns, name, 0}); it != routes_.end()) return it->second;
  return "127.0.0.1:" + std::to_string(port);
}

WebhookDispatcher::WebhookDispatcher(const ObjectStore& store, const ServiceRoutes& routes)
    : store_(store), routes_(routes), uids_(std::random_device{}()) {}

bool WebhookDispatcher::Active() const {
  return !store_.Snapshot(kConfigurationsKey, "").first.empty();
}

std::string WebhookDispatcher::NewUid() const {
  uint64_t a = 0, b = 0;
  {
    MutexLock lock(mu_);
    a = uids_();
    b = uids_();
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-4%03llx-%04llx-%012llx",
                static_cast<unsigned long long>(a >> 32),
                static_cast<unsigned long long>((a >> 16) & 0xffff),
                static_cast<unsigned long long>(a & 0xfff),
                static_cast<unsigned long long>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

WebhookVerdict WebhookDispatcher::Call(const ValidatingWebhook& hook, const std::string& uid,
                                       const std::string& version, const Json& review) const {
  auto failed = [](std::string why) {
    WebhookVerdict v;
    v.failure = std::move(why);
    return v;
  };
  const Endpoint endpoint = EndpointOf(hook, routes_);
  const std::string timeout = std::to_string(hook.timeout_seconds) + "s";
  http::ClientOptions options;
  options.base_url = "https://" + endpoint.address;
  options.ca_pem = hook.ca_bundle;
  options.tls_server_name = endpoint.server_name;
  options.default_timeout = std::chrono::seconds(hook.timeout_seconds);
  Result<std::unique_ptr<http::SocketClient>> client =
      hook.ca_bundle_valid ? http::SocketClient::Create(options)
                           : Status::InvalidArgument("caBundle is not base64");
  if (!client.ok()) {
    return failed(
        "could not get REST client: unable to load root certificates: unable to parse bytes "
        "as PEM block");
  }
  http::ClientRequest request;
  request.method = "POST";
  request.target = endpoint.path + "?timeout=" + timeout;
  request.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json, */*"}};
  request.body = review.dump();
  request.timeout = std::chrono::seconds(hook.timeout_seconds);
  request.total_timeout = request.timeout;
  http::ClientResult<http::ClientResponse> answer = (*client)->Send(request);
  if (!answer.ok()) {
    return failed("failed to call webhook: Post " + GoQuote(endpoint.url + "?timeout=" + timeout) +
                  ": " + GoNetError(answer.error(), endpoint.address));
  }
  return ReadWebhookAnswer(hook.name, uid, version, answer->status,
                           http::HeaderValue(answer->headers, "Content-Type"), answer->body);
}

std::optional<ApiError> WebhookDispatcher::Review(const AdmissionAttributes& request,
                                                  const ReviewContext& context,
                                                  std::vector<std::string>* warnings,
                                                  Json* details) const {
  if (IsExemptFromWebhooks(request)) return std::nullopt;
  // In name order, shared with the store (not copied).
  std::vector<ObjectPtr> configurations = store_.Snapshot(kConfigurationsKey, "").first;
  if (configurations.empty()) return std::nullopt;
  Json labels_holder;
  const Json& namespace_labels = NamespaceLabels(store_, request.ns, &labels_holder);
  for (const ObjectPtr& configuration : configurations) {
    for (const ValidatingWebhook& hook : WebhooksOf(*configuration)) {
      if (!ShouldCallWebhook(hook, request, namespace_labels)) continue;
      std::string version = ReviewVersionFor(hook);
      std::string uid = NewUid();
      WebhookVerdict verdict =
          version.empty()
              ? WebhookVerdict{WebhookVerdict::Kind::kCallFailed,
                               {},
                               {},
                               {},
                               "could not create admission objects: webhook does not accept "
                               "known AdmissionReview versions (v1, v1beta1)"}
              : Call(hook, uid, version, AdmissionReviewRequest(request, context, uid, version));
      warnings->insert(warnings->end(), verdict.warnings.begin(), verdict.warnings.end());
      switch (verdict.kind) {
        case WebhookVerdict::Kind::kAllowed:
          break;
        case WebhookVerdict::Kind::kDenied:
          *details = verdict.details;
          return verdict.denial;
        case WebhookVerdict::Kind::kCallFailed:
          if (hook.fail_open) {
            std::fprintf(stderr,
                         "dljob-test-apiserver: failed calling webhook, failing open %s: %s\n",
                         hook.name.c_str(), verdict.failure.c_str());
            break;
          }
          return CallFailedError(hook.name, verdict.failure, details);
      }
    }
  }
  return std::nullopt;
}

}  // namespace dljob::apiserver
