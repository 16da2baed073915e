// The admission.k8s.io AdmissionReview exchange with one validating webhook, as the real API
// server writes the request and reads the answer (apiserver's webhook/request and the validating
// dispatcher); pure, so every answer a webhook may give is tested without a socket.
//
// The request carries uid, kind, resource, subResource, requestKind, requestResource,
// requestSubResource, name, namespace, operation, userInfo, object (null for DELETE), oldObject
// (null for CREATE), dryRun and options (CreateOptions, UpdateOptions — PATCH too — or
// DeleteOptions). It is sent in the first version of the webhook's admissionReviewVersions the
// server knows (v1 or v1beta1).
//
// The answer: an HTTP error, a body that is not JSON, or (v1) a review without its apiVersion and
// kind, without a response, with another uid, or with a patch, is a failure to call the webhook
// ("failed calling webhook \"<name>\": …"; failurePolicy decides what follows). allowed: true
// lets the write go on; allowed: false refuses it with response.status: its code (400 when below
// 400), its reason and details, and the message "admission webhook \"<name>\" denied the request:
// <message>" (or the reason, or "without explanation"). response.warnings become Warning headers
// either way.
//
// Who asks (userInfo): the test server authenticates no one, so a request is system:anonymous
// (group system:unauthenticated) unless it carries Impersonate-User (with Impersonate-Group and
// Impersonate-Uid, as `kubectl --as` and client-go send them), completed as the real
// impersonation filter completes it (system:authenticated; a service account's groups).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/http.h"
#include "tests/apiserver/api_errors.h"
#include "tests/apiserver/webhook_config.h"

namespace dljob::apiserver {

// What a write tells a webhook besides its objects.
struct ReviewContext {
  nlohmann::json user_info;  // authentication/v1 UserInfo
  bool dry_run = false;
  nlohmann::json options;  // CreateOptions, UpdateOptions or DeleteOptions (meta.k8s.io/v1)
};

// The requesting user, from the request's impersonation headers (see above).
nlohmann::json UserInfoOf(const http::HttpHeaders& headers);

// The AdmissionReview version to send `hook` ("v1" or "v1beta1"); "" when it takes neither.
std::string ReviewVersionFor(const ValidatingWebhook& hook);

// The AdmissionReview body for `request`.
nlohmann::json AdmissionReviewRequest(const AdmissionAttributes& request,
                                      const ReviewContext& context, const std::string& uid,
                                      const std::string& version);

// What the server makes of one webhook's answer.
struct WebhookVerdict {
  enum class Kind { kAllowed, kDenied, kCallFailed };
  Kind kind = Kind::kCallFailed;
  std::vector<std::string> warnings;
  ApiError denial;         // kDenied: the refusal
  nlohmann::json details;  // kDenied: the status's details (null when none)
  std::string failure;     // kCallFailed: why, after "failed calling webhook …: "
};

// Reads an HTTP answer (`status`, its Content-Type, `body`) to the review sent with `uid`.
WebhookVerdict ReadWebhookAnswer(const std::string& hook_name, const std::string& uid,
                                 const std::string& version, int status,
                                 const std::string& content_type, const std::string& body);

// The 500 a failed call becomes under failurePolicy Fail: "Internal error occurred: failed
// calling webhook \"<name>\": <failure>"; `details` gets its causes.
ApiError CallFailedError(const std::string& hook_name, const std::string& failure,
                         nlohmann::json* details);

}  // namespace dljob::apiserver
