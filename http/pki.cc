// See pki.h.
#include "http/pki.h"

#include <ctime>
#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace dljob::http {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

// "cannot <what>: <OpenSSL's last error>", the error queue cleared.
Status PkiError(const std::string& what) {
  unsigned long code = ERR_get_error();
  char reason[256] = "unknown reason";
  if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  return Status::Internal("cannot " + what + ": " + reason);
}

Result<std::string> WritePem(bool (*write)(BIO*, void*), void* object) {
  BioPtr bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || !write(bio.get(), object)) return PkiError("write PEM");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<std::string> CertPem(X509* cert) {
  return WritePem([](BIO* b, void* x) { return PEM_write_bio_X509(b, static_cast<X509*>(x)) == 1; },
                  cert);
}

Result<std::string> KeyPem(EVP_PKEY* key) {
  return WritePem(
      [](BIO* b, void* k) {
        return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr,
                                        nullptr) == 1;
      },
      key);
}

Result<CertPtr> ReadCert(const std::string& pem, const char* what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  CertPtr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
  if (!cert) return PkiError(std::string("read the ") + what + " certificate (PEM)");
  return cert;
}

Result<KeyPtr> ReadKey(const std::string& pem, const char* what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  KeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr,
             EVP_PKEY_free);
  if (!key) return PkiError(std::string("read the ") + what + " key (PEM)");
  return key;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  bool ok = ext && X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A random positive 127-bit serial number, as RFC 5280 asks (unique per CA, unpredictable).
bool SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return false;
  bytes[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(bytes, sizeof bytes, nullptr);
  bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nullptr;
  BN_free(bn);
  return ok;
}

// An unsigned certificate for `key` named `common_name`, valid from an hour before `now` for
// `valid_for`; its issuer is `issuer` (null: itself).
Result<CertPtr> NewCertificate(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                               WallTime now, std::chrono::seconds valid_for) {
  CertPtr cert(X509_new(), X509_free);
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto* cn = reinterpret_cast<const unsigned char*>(common_name.c_str());
  X509* c = cert.get();
  bool ok = c && X509_set_version(c, 2) == 1 && SetRandomSerial(c) &&
            X509_time_adj_ex(X509_getm_notBefore(c), 0, -3600, &t) &&
            X509_time_adj_ex(X509_getm_notAfter(c), 0, static_cast<long>(valid_for.count()), &t) &&
            X509_set_pubkey(c, key) == 1 &&
            X509_NAME_add_entry_by_txt(X509_get_subject_name(c), "CN", MBSTRING_ASC, cn, -1, -1,
                                       0) == 1 &&
            X509_set_issuer_name(c, X509_get_subject_name(issuer ? issuer : c)) == 1;
  if (!ok) return PkiError("make a certificate for \"" + common_name + "\"");
  return cert;
}

Result<CertificateAndKey> SignAndWrite(X509* cert, EVP_PKEY* signer, EVP_PKEY* key) {
  if (X509_sign(cert, signer, EVP_sha256()) <= 0) return PkiError("sign a certificate");
  Result<std::string> cert_pem = CertPem(cert);
  if (!cert_pem.ok()) return cert_pem.status();
  Result<std::string> key_pem = KeyPem(key);
  if (!key_pem.ok()) return key_pem.status();
  return CertificateAndKey{*std::move(cert_pem), *std::move(key_pem)};
}

}  // namespace

Result<CertificateAndKey> MakeCertificateAuthority(const std::string& common_name, WallTime now,
                                                   std::chrono::seconds valid_for) {
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) return PkiError("generate a key");
  Result<CertPtr> cert = NewCertificate(key.get(), common_name, nullptr, now, valid_for);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  if (!AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(c, c, NID_subject_key_identifier, "hash")) {
    return PkiError("add the CA's extensions");
  }
  return SignAndWrite(c, key.get(), key.get());
}

Result<CertificateAndKey> IssueServingCertificate(const CertificateAndKey& ca,
                                                  const std::vector<std::string>& dns_names,
                                                  const std::vector<std::string>& ip_addresses,
                                                  WallTime now, std::chrono::seconds valid_for) {
  std::string san;
  for (const std::string& name : dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + name;
  for (const std::string& ip : ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  if (san.empty()) return Status::InvalidArgument("a serving certificate needs at least one name");
  Result<CertPtr> ca_cert = ReadCert(ca.cert_pem, "CA");
  if (!ca_cert.ok()) return ca_cert.status();
  Result<KeyPtr> ca_key = ReadKey(ca.key_pem, "CA");
  if (!ca_key.ok()) return ca_key.status();
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) return PkiError("generate a key");
  const std::string& cn = dns_names.empty() ? ip_addresses[0] : dns_names[0];
  Result<CertPtr> cert = NewCertificate(key.get(), cn, ca_cert->get(), now, valid_for);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  X509* issuer = ca_cert->get();
  if (!AddExtension(c, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(c, issuer, NID_key_usage, "critical,digitalSignature") ||
      !AddExtension(c, issuer, NID_ext_key_usage, "serverAuth") ||
      !AddExtension(c, issuer, NID_authority_key_identifier, "keyid") ||
      !AddExtension(c, issuer, NID_subject_alt_name, san)) {
    return PkiError("add the extensions of the certificate for \"" + cn + "\"");
  }
  return SignAndWrite(c, ca_key->get(), key.get());
}

Status VerifyServingCertificate(const std::string& ca_pem, const std::string& cert_pem,
                                const std::string& dns_name, WallTime at) {
  Result<CertPtr> ca = ReadCert(ca_pem, "CA");
  if (!ca.ok()) return ca.status();
  Result<CertPtr> cert = ReadCert(cert_pem, "serving");
  if (!cert.ok()) return cert.status();
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(),
                                                                      X509_STORE_CTX_free);
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca->get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert->get(), nullptr) != 1) {
    return PkiError("set up certificate verification");
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, std::chrono::system_clock::to_time_t(at));
  X509_VERIFY_PARAM_set1_host(param, dns_name.c_str(), dns_name.size());
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) != 1) {
    int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return Status::InvalidArgument("the certificate does not verify for \"" + dns_name +
                                   "\": " + X509_verify_cert_error_string(err));
  }
  return Status::Ok();
}

Result<WallTime> CertificateNotAfter(const std::string& cert_pem) {
  Result<CertPtr> cert = ReadCert(cert_pem, "serving");
  if (!cert.ok()) return cert.status();
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert->get()), &tm) != 1) {
    return PkiError("read the certificate's notAfter");
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace dljob::http
