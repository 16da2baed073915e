// See webhook_server.h.
#include "operator/app/webhook_server.h"

#include <cstdio>

#include "operator/app/admission_review.h"
#include "operator/app/webhook_cert.h"

namespace dljob::op {

http::Handler WebhookHandler() {
  return [](const http::HttpRequest& request, http::ResponseWriter& out) {
    if (request.path == "/healthz" && (request.method == "GET" || request.method == "HEAD")) {
      return out.Respond(200, {{"Content-Type", "text/plain"}}, "ok\n");
    }
    if (request.method != "POST") {
      return out.Respond(405, {{"Content-Type", "text/plain"}, {"Allow", "POST"}},
                         "the webhook answers POST only\n");
    }
    AdmissionAnswer a = ReviewAdmission(request.path, request.body);
    out.Respond(a.status, {{"Content-Type", a.content_type}}, a.body);
  };
}

Result<std::unique_ptr<http::HttpServer>> StartWebhook(const OperatorOptions& options,
                                                       kube::Api& api, const Clock& clock) {
  WebhookCertOptions cert_options{options.webhook_cert_secret, options.webhook_namespace,
                                  options.webhook_service, options.cluster_domain};
  Result<WebhookCertificate> cert = EnsureWebhookCertificate(api, cert_options, clock.Now());
  if (!cert.ok()) return cert.status().WithContext("the webhook's certificate");
  if (!options.webhook_configuration.empty()) {
    Status s = InjectCaBundle(api, options.webhook_configuration, cert->ca_pem);
    if (s.code() == StatusCode::kNotFound) {
      // Not installed (yet, or on purpose): serve anyway; the API server calls nothing until a
      // configuration exists, and the next start writes its caBundle.
      std::fprintf(stderr,
                   "dljob-operator: warning: no ValidatingWebhookConfiguration %s, so the API "
                   "server does not call this webhook; install the chart's, then restart the "
                   "operator to write its caBundle\n",
                   options.webhook_configuration.c_str());
    } else if (!s.ok()) {
      return s.WithContext("the webhook's CA bundle");
    }
  }
  http::HttpServerOptions so;
  so.host = options.metrics_address;
  so.port = options.webhook_port;
  so.tls = cert->serving;
  auto server = std::make_unique<http::HttpServer>(WebhookHandler(), so);
  if (Status s = server->Start(); !s.ok()) return s.WithContext("the webhook's server");
  return server;
}

}  // namespace dljob::op
