// See test_pki.h.
#include "http/testing/test_pki.h"

#include <atomic>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace dljob::http::testing {
namespace {

void Require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: OpenSSL failed to ") + what);
}

std::string Pem(int (*write)(BIO*, void*), void* object) {
  BIO* bio = BIO_new(BIO_s_mem());
  Require(bio && write(bio, object) == 1, "write PEM");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  return pem;
}

std::string CertPem(X509* cert) {
  return Pem([](BIO* b, void* x) { return PEM_write_bio_X509(b, static_cast<X509*>(x)); }, cert);
}

std::string KeyPem(EVP_PKEY* key) {
  return Pem(
      [](BIO* b, void* k) {
        return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr,
                                        nullptr);
      },
      key);
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  Require(ext && X509_add_ext(cert, ext, -1) == 1, "add an extension");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, not yet signed; issuer name left to the caller.
X509* NewCertificate(EVP_PKEY* key, const std::string& common_name) {
  static std::atomic<long> serial{1};
  X509* cert = X509_new();
  Require(
      cert && X509_set_version(cert, 2) == 1 &&
          ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++) == 1 &&
          X509_gmtime_adj(X509_getm_notBefore(cert), -3600) &&
          X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600) && X509_set_pubkey(cert, key) == 1 &&
          X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                                     reinterpret_cast<const unsigned char*>(common_name.c_str()),
                                     -1, -1, 0) == 1,
      "make a certificate");
  return cert;
}

}  // namespace

TestCa::TestCa(const std::string& common_name) {
  key_ = EVP_EC_gen("P-256");
  Require(key_ != nullptr, "generate a key");
  cert_ = NewCertificate(key_, common_name);
  Require(X509_set_issuer_name(cert_, X509_get_subject_name(cert_)) == 1, "set the issuer");
  AddExtension(cert_, cert_, NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(cert_, cert_, NID_key_usage, "critical,keyCertSign,cRLSign");
  AddExtension(cert_, cert_, NID_subject_key_identifier, "hash");
  Require(X509_sign(cert_, key_, EVP_sha256()) > 0, "sign the CA certificate");
  cert_pem_ = CertPem(cert_);
}

TestCa::~TestCa() {
  X509_free(cert_);
  EVP_PKEY_free(key_);
}

TestCertificate TestCa::Issue(const std::vector<std::string>& dns_names,
                              const std::vector<std::string>& ip_addresses) const {
  std::string san;
  for (const std::string& name : dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + name;
  for (const std::string& ip : ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  Require(!san.empty(), "issue a certificate without names");
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Require(key != nullptr, "generate a key");
  X509* cert = NewCertificate(key, dns_names.empty() ? ip_addresses[0] : dns_names[0]);
  Require(X509_set_issuer_name(cert, X509_get_subject_name(cert_)) == 1, "set the issuer");
  AddExtension(cert, cert_, NID_basic_constraints, "critical,CA:FALSE");
  AddExtension(cert, cert_, NID_key_usage, "critical,digitalSignature");
  AddExtension(cert, cert_, NID_ext_key_usage, "serverAuth");
  AddExtension(cert, cert_, NID_authority_key_identifier, "keyid");
  AddExtension(cert, cert_, NID_subject_alt_name, san);
  Require(X509_sign(cert, key_, EVP_sha256()) > 0, "sign a certificate");
  TestCertificate out{CertPem(cert), KeyPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace dljob::http::testing
