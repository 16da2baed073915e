// See tls_context.h.
#include "http/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

namespace dljob::http {
namespace {

Status TlsError(const std::string& what) {
  unsigned long code = ERR_get_error();
  char reason[256] = "unknown reason";
  if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  return Status::InvalidArgument(what + ": " + reason);
}

}  // namespace

Result<std::shared_ptr<const TlsServerContext>> TlsServerContext::Make(const std::string& cert_pem,
                                                                       const std::string& key_pem) {
  SSL_CTX* raw = SSL_CTX_new(TLS_server_method());
  if (!raw) return TlsError("cannot make a TLS context");
  std::shared_ptr<const TlsServerContext> ctx(new TlsServerContext(raw));
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  // A read that meets a record other than data (a TLS 1.3 session ticket) reads on.
  SSL_CTX_set_mode(raw, SSL_MODE_AUTO_RETRY);

  std::unique_ptr<BIO, decltype(&BIO_free)> cert(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), BIO_free);
  X509* leaf = cert ? PEM_read_bio_X509(cert.get(), nullptr, nullptr, nullptr) : nullptr;
  if (!leaf) return TlsError("the TLS certificate is not a PEM certificate");
  bool used = SSL_CTX_use_certificate(raw, leaf) == 1;
  X509_free(leaf);
  if (!used) return TlsError("the TLS certificate cannot be used");
  while (X509* extra = PEM_read_bio_X509(cert.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(raw, extra) != 1) {
      X509_free(extra);
      return TlsError("the TLS certificate chain cannot be used");
    }
  }
  ERR_clear_error();  // the end of the chain reads as a PEM error

  std::unique_ptr<BIO, decltype(&BIO_free)> key(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), BIO_free);
  EVP_PKEY* pkey = key ? PEM_read_bio_PrivateKey(key.get(), nullptr, nullptr, nullptr) : nullptr;
  if (!pkey) return TlsError("the TLS key is not an unencrypted PEM private key");
  used = SSL_CTX_use_PrivateKey(raw, pkey) == 1;
  EVP_PKEY_free(pkey);
  if (!used || SSL_CTX_check_private_key(raw) != 1) {
    return TlsError("the TLS key does not belong to the certificate");
  }
  return ctx;
}

TlsServerContext::~TlsServerContext() { SSL_CTX_free(ctx_); }

}  // namespace dljob::http
