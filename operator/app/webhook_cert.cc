// See webhook_cert.h.
#include "operator/app/webhook_cert.h"

#include <cstdio>

#include "base/base64.h"

namespace dljob::op {

const kube::Resource kValidatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                      "validatingwebhookconfigurations", false,
                                                      "ValidatingWebhookConfiguration"};

namespace {

using kube::Json;
constexpr int kCertAttempts = 5;  // conflicts with other replicas, each a fresh read

std::string SecretWhere(const WebhookCertOptions& o) {
  return "Secret " + o.namespace_ + "/" + o.secret_name;
}

// The certificate a Secret holds, if it is one this webhook can serve until `now + kRenewBefore`.
Result<WebhookCertificate> Usable(const Json& secret, const WebhookCertOptions& options,
                                  WallTime now) {
  const Json data = secret.value("data", Json::object());
  auto field = [&](const char* key) -> std::optional<std::string> {
    if (!data.contains(key) || !data[key].is_string()) return std::nullopt;
    return Base64Decode(data[key].get<std::string>());
  };
  std::optional<std::string> ca = field(kCaCertKey), cert = field(kTlsCertKey),
                             key = field(kTlsKeyKey);
  if (!ca || !cert || !key) {
    return Status::FailedPrecondition(std::string("it lacks ") + kCaCertKey + ", " + kTlsCertKey +
                                      " or " + kTlsKeyKey);
  }
  for (const std::string& name : WebhookDnsNames(options)) {
    if (Status s = http::VerifyServingCertificate(*ca, *cert, name, now + kRenewBefore); !s.ok()) {
      return s;
    }
  }
  return WebhookCertificate{*ca, {*cert, *key}};
}

Result<Json> NewSecret(const WebhookCertOptions& options, WallTime now) {
  Result<http::CertificateAndKey> ca = http::MakeCertificateAuthority(
      options.service_name + "." + options.namespace_ + " webhook CA", now, kCaValidity);
  if (!ca.ok()) return ca.status();
  Result<http::CertificateAndKey> serving =
      http::IssueServingCertificate(*ca, WebhookDnsNames(options), {}, now, kServingValidity);
  if (!serving.ok()) return serving.status();
  return Json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata",
               {{"name", options.secret_name},
                {"namespace", options.namespace_},
                {"labels", {{"app.kubernetes.io/name", "dljob-operator"}}}}},
              {"type", "kubernetes.io/tls"},
              {"data",
               {{kCaCertKey, Base64Encode(ca->cert_pem)},
                {kTlsCertKey, Base64Encode(serving->cert_pem)},
                {kTlsKeyKey, Base64Encode(serving->key_pem)}}}};
}

}  // namespace

std::vector<std::string> WebhookDnsNames(const WebhookCertOptions& o) {
  const std::string svc = o.service_name, ns = o.namespace_;
  return {svc, svc + "." + ns, svc + "." + ns + ".svc",
          svc + "." + ns + ".svc." + o.cluster_domain};
}

Result<WebhookCertificate> EnsureWebhookCertificate(kube::Api& api,
                                                    const WebhookCertOptions& options,
                                                    WallTime now) {
  const kube::Resource& secrets = kube::resources::kSecrets;
  for (int attempt = 0; attempt < kCertAttempts; ++attempt) {
    kube::ApiResult<Json> stored = api.Get(secrets, options.namespace_, options.secret_name);
    if (!stored.ok() && !stored.error().IsNotFound()) {
      return stored.error().ToStatus().WithContext("reading " + SecretWhere(options));
    }
    if (stored.ok()) {
      Result<WebhookCertificate> usable = Usable(*stored, options, now);
      if (usable.ok()) return usable;
      std::fprintf(stderr, "dljob-operator: replacing the webhook certificate in %s: %s\n",
                   SecretWhere(options).c_str(), usable.status().message().c_str());
    }
    Result<Json> fresh = NewSecret(options, now);
    if (!fresh.ok()) return fresh.status().WithContext("making the webhook certificate");
    kube::ApiResult<Json> written =
        stored.ok() ? api.Replace(secrets, options.namespace_,
                                  [&] {
                                    Json s = *fresh;
                                    s["metadata"]["resourceVersion"] =
                                        (*stored)["metadata"].value("resourceVersion", "");
                                    return s;
                                  }())
                    : api.Create(secrets, options.namespace_, *fresh);
    if (written.ok()) return Usable(*fresh, options, now);
    // Another replica wrote it first: read the winner's.
    if (written.error().IsAlreadyExists() || written.error().IsConflict()) continue;
    return written.error().ToStatus().WithContext("writing " + SecretWhere(options));
  }
  return Status::Unavailable(SecretWhere(options) + " kept changing under this replica (" +
                             std::to_string(kCertAttempts) + " attempts)");
}

Status InjectCaBundle(kube::Api& api, const std::string& configuration, const std::string& ca_pem) {
  const std::string where = "ValidatingWebhookConfiguration " + configuration;
  const std::string bundle = Base64Encode(ca_pem);
  for (int attempt = 0; attempt < kCertAttempts; ++attempt) {
    kube::ApiResult<Json> stored = api.Get(kValidatingWebhookConfigurations, "", configuration);
    if (!stored.ok()) return stored.error().ToStatus().WithContext("reading " + where);
    Json updated = *stored;
    bool changed = false;
    for (Json& webhook : updated["webhooks"]) {
      Json& client = webhook["clientConfig"];
      if (client.value("caBundle", "") == bundle) continue;
      client["caBundle"] = bundle;
      changed = true;
    }
    if (!changed) return Status::Ok();
    kube::ApiResult<Json> written = api.Replace(kValidatingWebhookConfigurations, "", updated);
    if (written.ok()) return Status::Ok();
    if (written.error().IsConflict()) continue;
    return written.error().ToStatus().WithContext("writing the caBundle of " + where);
  }
  return Status::Unavailable(where + " kept changing under this replica (" +
                             std::to_string(kCertAttempts) + " attempts)");
}

}  // namespace dljob::op
