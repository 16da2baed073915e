// Certificates for TLS tests, made in-process by http/pki.h (nothing on disk, nothing fetched): a
// fresh certificate authority per TestCa, and server certificates it signs for the names and
// addresses a test chooses — say one for "kubernetes.test" served on 127.0.0.1, to check that a
// client verifies the name it was told to. Keys are ECDSA P-256; certificates are valid from an
// hour ago for a day. Test-only.
//
// Construction and Issue() throw std::runtime_error if OpenSSL fails (a test cannot go on
// without its certificates). A TestCa is immutable once made; Issue() is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "http/pki.h"

namespace dljob::http::testing {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;  // unencrypted PKCS#8
};

class TestCa {
 public:
  explicit TestCa(const std::string& common_name = "dljob test CA");

  const std::string& cert_pem() const { return ca_.cert_pem; }

  // A server certificate (extended key usage serverAuth) naming `dns_names` and `ip_addresses`
  // ("127.0.0.1", "::1") in its subjectAltName, its common name the first of them.
  TestCertificate Issue(const std::vector<std::string>& dns_names,
                        const std::vector<std::string>& ip_addresses = {}) const;

 private:
  CertificateAndKey ca_;
};

}  // namespace dljob::http::testing
