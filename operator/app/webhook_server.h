// The admission webhook's HTTPS server: at start-up the certificate (webhook_cert.h: from the
// Secret, made when missing) and the CA written into the ValidatingWebhookConfiguration, then
// POST /validate-dljob and /validate-dlqueue answered by ReviewAdmission (admission_review.h) on
// every replica, leader or not — the API server may call any of them through the Service.
// GET /healthz answers "ok". A configuration that does not exist (not installed yet, or not
// wanted) is a warning, not an error: the webhook serves, and the next start writes its caBundle.
//
// The returned server runs on its own threads until it is stopped or destroyed.
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/status.h"
#include "http/http_server.h"
#include "kube/api.h"
#include "operator/app/options.h"

namespace dljob::op {

// The handler, for a server the caller makes (tests serve it over HTTPS with a test certificate).
http::Handler WebhookHandler();

// REQUIRES: options.webhook_port >= 0. Errors name the step that failed.
Result<std::unique_ptr<http::HttpServer>> StartWebhook(const OperatorOptions& options,
                                                       kube::Api& api, const Clock& clock);

}  // namespace dljob::op
