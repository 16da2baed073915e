// http/pki.h: the CA and the serving certificates it issues, checked by OpenSSL's own
// verification (the same one a client's handshake runs) for every name, and for what must fail.
#include "http/pki.h"

#include <gtest/gtest.h>

namespace dljob::http {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

const WallTime kNow = std::chrono::system_clock::from_time_t(1'750'000'000);  // June 2025
constexpr seconds kYear{365 * 24 * 3600};

TEST(Pki, ServingCertificateVerifiesForEachNameAgainstItsCa) {
  auto ca = MakeCertificateAuthority("dljob-webhook-ca", kNow, 10 * kYear);
  ASSERT_TRUE(ca.ok()) << ca.status().message();
  const std::vector<std::string> names = {"dljob-webhook", "dljob-webhook.dljob-system",
                                          "dljob-webhook.dljob-system.svc",
                                          "dljob-webhook.dljob-system.svc.cluster.local"};
  auto cert = IssueServingCertificate(*ca, names, {}, kNow, kYear);
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  for (const std::string& name : names) {
    Status s = VerifyServingCertificate(ca->cert_pem, cert->cert_pem, name, kNow);
    EXPECT_TRUE(s.ok()) << name << ": " << s.message();
  }
  Status other =
      VerifyServingCertificate(ca->cert_pem, cert->cert_pem, "dljob-webhook.other.svc", kNow);
  EXPECT_FALSE(other.ok());
  EXPECT_NE(other.message().find("hostname mismatch"), std::string::npos) << other.message();
}

TEST(Pki, OnlyItsOwnCaAndOnlyWhileValid) {
  auto ca = MakeCertificateAuthority("ca", kNow, 10 * kYear);
  auto other = MakeCertificateAuthority("ca", kNow, 10 * kYear);  // same name, another key
  ASSERT_TRUE(ca.ok() && other.ok());
  auto cert = IssueServingCertificate(*ca, {"svc.ns.svc"}, {}, kNow, kYear);
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_FALSE(VerifyServingCertificate(other->cert_pem, cert->cert_pem, "svc.ns.svc", kNow).ok());
  // Valid from an hour before it was made, until valid_for after.
  EXPECT_TRUE(VerifyServingCertificate(ca->cert_pem, cert->cert_pem, "svc.ns.svc",
                                       kNow - hours(1) + seconds(1))
                  .ok());
  EXPECT_FALSE(
      VerifyServingCertificate(ca->cert_pem, cert->cert_pem, "svc.ns.svc", kNow - hours(2)).ok());
  Status expired =
      VerifyServingCertificate(ca->cert_pem, cert->cert_pem, "svc.ns.svc", kNow + kYear + hours(1));
  EXPECT_NE(expired.message().find("expired"), std::string::npos) << expired.message();
  auto not_after = CertificateNotAfter(cert->cert_pem);
  ASSERT_TRUE(not_after.ok()) << not_after.status().message();
  EXPECT_EQ(*not_after, kNow + kYear);
}

TEST(Pki, ErrorsSayWhat) {
  auto none = IssueServingCertificate({"x", "y"}, {}, {}, kNow, kYear);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "a serving certificate needs at least one name");
  auto bad = IssueServingCertificate({"not pem", "not pem"}, {"a.test"}, {}, kNow, kYear);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cannot read the CA certificate"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(CertificateNotAfter("garbage").ok());
}

}  // namespace
}  // namespace dljob::http
