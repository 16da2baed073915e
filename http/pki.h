// Certificates made in-process with OpenSSL, for a server that must serve TLS without anyone
// handing it a certificate (the operator's admission webhook, as Kueue's internal certificate
// management does): a self-signed certificate authority, and serving certificates it signs for
// the DNS names and IP addresses a caller chooses. Also the checks a reader of a stored
// certificate needs: does it chain to this CA, does it name this host, until when is it valid.
//
// Keys are ECDSA P-256, certificates SHA-256-signed X.509 v3, valid from an hour before `now` (for
// clocks a little behind) until `now + valid_for`. A CA's certificate is a CA (basicConstraints
// critical CA:TRUE, keyCertSign); a serving certificate is not (serverAuth, digitalSignature,
// subjectAltName holding every name). PEM in, PEM out: keys as unencrypted PKCS#8.
//
// Every function is pure apart from the random numbers it draws; errors name what OpenSSL could
// not do. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace dljob::http {

struct CertificateAndKey {
  std::string cert_pem;
  std::string key_pem;
  bool operator==(const CertificateAndKey&) const = default;
};

// A new self-signed certificate authority named `common_name`.
Result<CertificateAndKey> MakeCertificateAuthority(const std::string& common_name, WallTime now,
                                                   std::chrono::seconds valid_for);

// A serving certificate signed by `ca`, naming `dns_names` and `ip_addresses` ("127.0.0.1",
// "::1") in its subjectAltName; its common name is the first of them. REQUIRES: at least one name.
Result<CertificateAndKey> IssueServingCertificate(const CertificateAndKey& ca,
                                                  const std::vector<std::string>& dns_names,
                                                  const std::vector<std::string>& ip_addresses,
                                                  WallTime now, std::chrono::seconds valid_for);

// Ok when `cert_pem` is signed by the certificate in `ca_pem`, is valid at `at`, and names
// `dns_name` (no partial wildcards); otherwise why not, in OpenSSL's words.
Status VerifyServingCertificate(const std::string& ca_pem, const std::string& cert_pem,
                                const std::string& dns_name, WallTime at);

// The end of a certificate's validity (notAfter).
Result<WallTime> CertificateNotAfter(const std::string& cert_pem);

}  // namespace dljob::http
