// The admission webhook's serving certificate, made by the operator itself (as Kueue's internal
// certificate management does), so that installing dljob needs no cert-manager.
//
// EnsureWebhookCertificate() keeps one CA and one serving certificate in a Secret of the
// operator's namespace, so every replica serves the same certificate: it reads the Secret; when
// there is none it makes a CA and a serving certificate for the webhook Service's DNS names
// (http/pki.h) and creates it — the first replica to create it wins, the others read the winner's
// (409 AlreadyExists → read again). A Secret whose certificate does not verify against its CA for
// every name, or expires within kRenewBefore, is replaced (an update with its resourceVersion; on
// a conflict another replica replaced it first, and its certificate is read).
//
// InjectCaBundle() writes the CA into webhooks[].clientConfig.caBundle of the one
// ValidatingWebhookConfiguration named (read, change, replace with its resourceVersion, again on
// a conflict), so the API server trusts the certificate. Nothing is written when it is already
// there.
//
// Both do a few API calls and return; errors name the object and the API's answer. Thread-
// compatible (call from one thread at start-up).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "http/pki.h"
#include "kube/api.h"

namespace dljob::op {

// The Secret's keys: the CA's certificate, the serving certificate and its key (PEM); the Secret
// has type kubernetes.io/tls, so it mounts and reads as any TLS Secret does.
inline constexpr char kCaCertKey[] = "ca.crt";
inline constexpr char kTlsCertKey[] = "tls.crt";
inline constexpr char kTlsKeyKey[] = "tls.key";

// The CA lives ten years, the serving certificate one; a certificate with less than 30 days
// left is replaced at the next start of a replica (a rolling restart renews it).
inline constexpr std::chrono::seconds kCaValidity{10 * 365 * 24 * 3600};
inline constexpr std::chrono::seconds kServingValidity{365 * 24 * 3600};
inline constexpr std::chrono::seconds kRenewBefore{30 * 24 * 3600};

extern const kube::Resource kValidatingWebhookConfigurations;

struct WebhookCertOptions {
  std::string secret_name;     // "dljob-webhook-cert"
  std::string namespace_;      // the operator's namespace: the Secret's and the Service's
  std::string service_name;    // "dljob-webhook"
  std::string cluster_domain;  // "cluster.local"
};

struct WebhookCertificate {
  std::string ca_pem;
  http::CertificateAndKey serving;
};

// <svc>, <svc>.<ns>, <svc>.<ns>.svc, <svc>.<ns>.svc.<clusterDomain>: every name the API server
// may use to call the Service.
std::vector<std::string> WebhookDnsNames(const WebhookCertOptions& options);

Result<WebhookCertificate> EnsureWebhookCertificate(kube::Api& api,
                                                    const WebhookCertOptions& options,
                                                    WallTime now);

Status InjectCaBundle(kube::Api& api, const std::string& configuration, const std::string& ca_pem);

}  // namespace dljob::op
