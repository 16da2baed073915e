// ClientTlsContext: the OpenSSL client context of SocketClient (socket_client.h), one per client:
// what to trust, what to present, what name the server's certificate must carry.
//
// Make() loads the PEM text up front, so a bad bundle, certificate or key is an error naming the
// kubeconfig field at fault (certificate-authority, client-certificate, client-key) before any
// request. Trust is exactly the given CA bundle, or the system's roots without one. The server's
// certificate must chain to it and name `server_name` (OpenSSL's X509_check_host rules,
// wildcards only as a whole left-most label; an IP address is checked against the
// certificate's IP addresses), unless `verify` is false. TLS 1.2 or later. Sessions are resumed
// from the last handshake where the server allows it.
//
// Attach() puts a new session on a connected socket, with the name as SNI unless it is an IP
// address, reading and writing through send()/recv() with MSG_NOSIGNAL (a reset connection is an
// error, never a SIGPIPE).
//
// Thread-safety: the context is immutable once made, except for the resumable session, which
// is guarded; Attach() may run on many threads at once.
#pragma once

#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/status.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_session_st SSL_SESSION;

namespace dljob::http {

struct ClientTlsOptions {
  std::string ca_pem;  // empty: the system's roots
  std::string cert_pem;
  std::string key_pem;
  std::string server_name;  // never empty
  bool verify = true;
};

class ClientTlsContext {
 public:
  static Result<std::unique_ptr<ClientTlsContext>> Make(const ClientTlsOptions& options);
  ~ClientTlsContext();
  ClientTlsContext(const ClientTlsContext&) = delete;
  ClientTlsContext& operator=(const ClientTlsContext&) = delete;

  // A new client session on `fd` (connected, non-blocking), not yet handshaken; the caller
  // frees it with SSL_free and keeps `fd` open until then. Null only when OpenSSL cannot
  // allocate.
  SSL* Attach(int fd);

 private:
  ClientTlsContext(SSL_CTX* ctx, std::string server_name, bool ip)
      : ctx_(ctx), server_name_(std::move(server_name)), ip_(ip) {}
  static int KeepSession(SSL* ssl, SSL_SESSION* session);  // OpenSSL's new-session callback
  SSL_CTX* const ctx_;
  const std::string server_name_;
  const bool ip_;  // server_name is an IP address: no SNI
  Mutex mu_;
  SSL_SESSION* session_ GUARDED_BY(mu_) = nullptr;
};

}  // namespace dljob::http
