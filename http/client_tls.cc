// See client_tls.h.
#include "http/client_tls.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "http/url.h"

namespace dljob::http {
namespace {

// A socket BIO that sends with MSG_NOSIGNAL (OpenSSL's own writes with write(2), which raises
// SIGPIPE on a reset connection). The socket is the BIO's data; the BIO does not own it.
int SocketOf(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

bool Retryable(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

int BioWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n = ::send(SocketOf(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && Retryable(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int BioRead(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t n = ::recv(SocketOf(bio), data, static_cast<size_t>(size), 0);
  if (n < 0 && Retryable(errno)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

long BioCtrl(BIO* /*bio*/, int cmd, long /*num*/, void* /*ptr*/) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is buffered here
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

BIO_METHOD* SocketBioMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "dljob socket");
    BIO_meth_set_write(m, BioWrite);
    BIO_meth_set_read(m, BioRead);
    BIO_meth_set_ctrl(m, BioCtrl);
    BIO_meth_set_create(m, BioCreate);
    return m;
  }();
  return method;
}

// The reason OpenSSL gave last, or `fallback`.
std::string OpenSslReason(const char* fallback) {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return fallback;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

// Trust exactly the certificates of `pem`.
Status TrustOnly(SSL_CTX* ctx, const std::string& pem) {
  Bio bio = MemoryBio(pem);
  STACK_OF(X509_INFO)* infos = PEM_X509_INFO_read_bio(bio.get(), nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  int added = 0;
  bool bad = infos == nullptr;
  for (int i = 0; infos && i < sk_X509_INFO_num(infos); ++i) {
    X509_INFO* info = sk_X509_INFO_value(infos, i);
    if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1) ++added;
  }
  if (infos) sk_X509_INFO_pop_free(infos, X509_INFO_free);
  SSL_CTX_set_cert_store(ctx, store);  // the context owns it now
  if (bad || added == 0) {
    return Status::InvalidArgument("certificate-authority is not a valid PEM certificate bundle: " +
                                   OpenSslReason("no certificate in it"));
  }
  ERR_clear_error();
  return Status::Ok();
}

// Present the certificate chain of `cert_pem` (the client's first) with the key of `key_pem`.
Status Present(SSL_CTX* ctx, const std::string& cert_pem, const std::string& key_pem) {
  Bio certs = MemoryBio(cert_pem);
  X509* leaf = PEM_read_bio_X509_AUX(certs.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr || SSL_CTX_use_certificate(ctx, leaf) != 1) {
    X509_free(leaf);
    return Status::InvalidArgument("client-certificate is not a valid PEM certificate: " +
                                   OpenSslReason("no certificate in it"));
  }
  X509_free(leaf);
  while (X509* extra = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add0_chain_cert(ctx, extra);  // the context owns it now
  }
  ERR_clear_error();  // the loop ends on "no start line"
  Bio key_bio = MemoryBio(key_pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  bool ok = key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1 &&
            SSL_CTX_check_private_key(ctx) == 1;
  EVP_PKEY_free(key);
  if (!ok) {
    return Status::InvalidArgument(
        "client-key is not a valid PEM private key for client-certificate: " +
        OpenSslReason("no key in it"));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<ClientTlsContext>> ClientTlsContext::Make(const ClientTlsOptions& options) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Internal("TLS: " + OpenSslReason("cannot make a context"));
  const bool ip = IsIpAddress(options.server_name);
  std::unique_ptr<ClientTlsContext> out(new ClientTlsContext(ctx, options.server_name, ip));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Partial writes and a moving buffer, as a non-blocking writer needs; buffers released while a
  // connection is idle (a followed log mostly waits); an EOF without close_notify is an EOF (the
  // body's framing tells a cut-short answer, as Go's client does).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (!options.ca_pem.empty()) {
    if (Status s = TrustOnly(ctx, options.ca_pem); !s.ok()) return s;
  } else {
    SSL_CTX_set_default_verify_paths(ctx);
  }
  if (!options.cert_pem.empty() || !options.key_pem.empty()) {
    if (Status s = Present(ctx, options.cert_pem, options.key_pem); !s.ok()) return s;
  }
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  if (ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, options.server_name.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, options.server_name.c_str(), 0);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  }
  SSL_CTX_set_verify(ctx, options.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_app_data(ctx, out.get());
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &ClientTlsContext::KeepSession);
  return out;
}

ClientTlsContext::~ClientTlsContext() {
  {
    MutexLock lock(mu_);
    SSL_SESSION_free(session_);
  }
  SSL_CTX_free(ctx_);
}

int ClientTlsContext::KeepSession(SSL* ssl, SSL_SESSION* session) {
  auto* self = static_cast<ClientTlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  MutexLock lock(self->mu_);
  SSL_SESSION_free(self->session_);
  self->session_ = session;
  return 1;  // the reference is ours now
}

SSL* ClientTlsContext::Attach(int fd) {
  SSL* ssl = SSL_new(ctx_);
  BIO* bio = ssl ? BIO_new(SocketBioMethod()) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl);
    return nullptr;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);  // one reference for both directions, owned by the session
  if (!ip_) SSL_set_tlsext_host_name(ssl, server_name_.c_str());
  SSL_set_connect_state(ssl);
  MutexLock lock(mu_);
  if (session_ != nullptr) SSL_set_session(ssl, session_);
  return ssl;
}

}  // namespace dljob::http
