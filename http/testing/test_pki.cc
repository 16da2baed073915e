// See test_pki.h. The certificates are made by the production code (http/pki.h); this wraps it
// with a test's defaults and throws where a test cannot go on.
#include "http/testing/test_pki.h"

#include <stdexcept>

namespace dljob::http::testing {
namespace {

constexpr std::chrono::seconds kDay{24 * 3600};

template <typename T>
T Require(Result<T> r) {
  if (!r.ok()) throw std::runtime_error("test PKI: " + r.status().message());
  return *std::move(r);
}

}  // namespace

TestCa::TestCa(const std::string& common_name)
    : ca_(Require(MakeCertificateAuthority(common_name, RealClock().Now(), kDay))) {}

TestCertificate TestCa::Issue(const std::vector<std::string>& dns_names,
                              const std::vector<std::string>& ip_addresses) const {
  CertificateAndKey c =
      Require(IssueServingCertificate(ca_, dns_names, ip_addresses, RealClock().Now(), kDay));
  return TestCertificate{std::move(c.cert_pem), std::move(c.key_pem)};
}

}  // namespace dljob::http::testing
