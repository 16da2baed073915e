// CpprestTransport: the production Transport, HTTP/1.1 over cpprestsdk's Boost.Asio client.
//
// Speaks http:// and https:// to the server of a Config: trusts exactly the Config's CA bundle
// when one is given (the system roots otherwise), presents its client certificate and key for
// mutual TLS, and skips verification only with insecure_skip_tls_verify. Request::timeout is an
// inactivity limit (cpprestsdk restarts its timer whenever bytes move), so a watch may stream for
// as long as events or bookmarks keep arriving. Open() returns once the headers are in; the
// body's chunks are then handed to BodyStream::Read() as they arrive (a pump on cpprestsdk's
// thread pool fills a queue), and Cancel() makes a blocked Read() return at once and closes the
// connection. Dropping a BodyStream cancels it. cpprestsdk's exceptions stop at this file: every
// failure comes back as an ApiError with http == 0 and a kReason* reason.
//
// Thread-safety: Send() and Open() may be called from many threads at once; connections are
// pooled per timeout value. A BodyStream belongs to one reader; Cancel() is safe from any thread.
#pragma once

#include <chrono>
#include <memory>

#include "base/status.h"
#include "kube/config.h"
#include "kube/transport.h"

namespace dljob::kube {

class CpprestTransport : public Transport {
 public:
  // Checks config.server and the PEM data (CA, client certificate, matching key) up front, so a
  // bad kubeconfig is reported here, naming the field, rather than on the first request.
  // `default_timeout` applies to requests whose timeout is zero.
  static Result<std::unique_ptr<CpprestTransport>> Create(
      const Config& config, std::chrono::milliseconds default_timeout = std::chrono::seconds(30));
  ~CpprestTransport() override;

  ApiResult<Response> Send(const Request& request) override;
  ApiResult<StreamResponse> Open(const Request& request) override;

 private:
  struct Impl;
  explicit CpprestTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dljob::kube
