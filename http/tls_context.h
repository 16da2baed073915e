// TlsServerContext: the OpenSSL server context of an HTTPS server — one certificate and its key,
// TLS 1.2 or later — shared by HttpServer (http_server.h) and the test servers of http/testing,
// so the certificate is loaded and checked in one place.
//
// Make() reads the PEM certificate (a chain: the server's first, then intermediates) and key and
// checks that they belong together; an error names which part is wrong. The context is
// immutable once made and may be used by many connections on many threads at once.
#pragma once

#include <memory>
#include <string>

#include <openssl/types.h>

#include "base/status.h"

namespace dljob::http {

class TlsServerContext {
 public:
  static Result<std::shared_ptr<const TlsServerContext>> Make(const std::string& cert_pem,
                                                              const std::string& key_pem);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  // For SSL_new(); owned by this context.
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsServerContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

}  // namespace dljob::http
