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
// ClientError naming the request (and the proxy, when there is one).
//
// Through an HTTP proxy (proxy_url), http:// requests go to the proxy in absolute form
// ("GET http://host:port/path HTTP/1.1") and https:// ones through a CONNECT tunnel, TLS running
// end to end between this client and the server; streamed requests (Open) go the same ways.
// Proxy credentials from the URL's userinfo go as "Proxy-Authorization: Basic" on every CONNECT
// and every absolute-form request. A proxy that cannot be reached, or that refuses a CONNECT
// (407 for bad credentials, 403, 502...), is kConnectFailed naming the proxy: the request never
// reached the server. Through a plain-HTTP proxy its refusals are ordinary responses (a 407).
//
// Over https the server's certificate must chain to the trusted CAs and name tls_server_name, or
// base_url's host when that is empty — a request's Host header changes neither (cpprestsdk's own
// check, which would follow it, port and all, is replaced) — and that name is sent as SNI unless
// it is an IP address (checked against the certificate's IP addresses). The connection always goes
// to base_url's host. The check is OpenSSL's (X509_check_host rules, wildcards only as a whole
// left-most label) and stays on unless insecure_skip_tls_verify; a certificate that fails it is
// kTransportError.
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
  // https only: the host name (or IP address) the server's certificate must name and the name
  // sent as SNI (kubeconfig's tls-server-name), for a server reached by an address its
  // certificate does not name. "" = base_url's host.
  std::string tls_server_name;
  // The HTTP proxy for every request, "" for none: "http://[user[:password]@]host[:port]" (port
  // 80 when not given; user and password percent-decoded), as kubeconfig's proxy-url. It applies
  // to every request of this client; choosing it per host from HTTPS_PROXY, HTTP_PROXY and
  // NO_PROXY is http/proxy.h's ProxyForUrl, for the caller. https:// proxies (TLS to the proxy)
  // and socks5:// ones are refused by Create(): cpprestsdk speaks to neither.
  std::string proxy_url;
};

class CpprestClient final : public Client {
 public:
  // Checks the base URL, the PEM data (CA, client certificate, matching key), the TLS server
  // name and the proxy URL up front, so a bad setting is reported here (kInvalidArgument, naming
  // what is wrong) rather than on the first request.
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
