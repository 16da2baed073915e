// CpprestClient: the production Client (client.h), HTTP/1.1 over cpprestsdk's Boost.Asio client.
//
// Speaks http:// and https:// to one server, the base URL. For https it trusts exactly the given
// CA bundle when there is one (the system roots otherwise), presents a client certificate and
// key for mutual TLS, and skips verification only with insecure_skip_tls_verify. A request's
// timeout is an inactivity limit (cpprestsdk restarts its timer whenever bytes move), so a watch
// may stream for as long as events keep arriving; a request's total_timeout is a hard limit on
// the exchange (a timer on cpprestsdk's Asio service cancels it), which leaves the pooling alone.
// Redirects are not followed. Open() returns once the headers are in; the body's chunks are then
// handed to BodyStream::Read() as they arrive (a pump on cpprestsdk's thread pool fills a queue),
// and Cancel() makes a blocked Read() return at once and closes the connection. Dropping a
// BodyStream cancels it. cpprestsdk's exceptions stop at this file: every failure comes back as a
// ClientError naming the request.
//
// Thread-safety: Send() and Open() may be called from many threads at once; connections are
// pooled per timeout value. A BodyStream belongs to one reader; Cancel() is safe from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/client.h"

namespace dljob::http {

struct CpprestClientOptions {
  std::string base_url;  // "http[s]://host[:port]"; a trailing '/' is ignored
  std::chrono::milliseconds default_timeout{30'000};  // for requests whose timeout is zero
  // TLS, for https only; PEM text, not file names.
  std::string ca_pem;           // trust exactly these CAs; empty: the system's roots
  std::string client_cert_pem;  // with client_key_pem: presented for mutual TLS
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
};

class CpprestClient final : public Client {
 public:
  // Checks the base URL and the PEM data (CA, client certificate, matching key) up front, so a
  // bad setting is reported here, naming what is wrong, rather than on the first request.
  static Result<std::unique_ptr<CpprestClient>> Create(const CpprestClientOptions& options);
  ~CpprestClient() override;

  ClientResult<ClientResponse> Send(const ClientRequest& request) override;
  ClientResult<StreamedResponse> Open(const ClientRequest& request) override;

 private:
  struct Impl;
  explicit CpprestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dljob::http
