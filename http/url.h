// The parts of an absolute URL that dljob's HTTP client reads — a kubeconfig's server, a proxy
// URL — split by the rules Go's net/url applies to them, so dljob reads them as kubectl does; and
// the host helpers that go with them. One definition for the client (socket_client.cc,
// client_connection.cc, client_tls.cc) and the proxy rules (proxy.cc).
//
// All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dljob::http {

struct UrlParts {
  std::string scheme;  // lower-case
  std::optional<std::string> userinfo;
  std::string host;  // lower-case, without an IPv6 address's brackets
  std::string port;  // "" when none (or an empty one: "host:")
  std::string rest;  // the path, query and fragment after the authority, as written
};

// Fills `out` from "scheme://[userinfo@]host[:port][rest]", or says why it cannot: no scheme, a
// malformed one, no host, an invalid character in it, an IPv6 address without brackets, a port
// that is not a number up to 65535.
std::optional<std::string> SplitUrl(std::string_view url, UrlParts* out);

// A port number: 1 to 5 digits, at most 65535.
std::optional<int> ParsePort(std::string_view s);

// The scheme's port when a URL names none: https 443, socks5 1080, otherwise 80.
int DefaultPort(std::string_view scheme);

// "host:port", with brackets around an IPv6 address ("[::1]:6443"), as Go's net.JoinHostPort.
std::string JoinHostPort(std::string_view host, int port);

// Whether `s` is an IPv4 or IPv6 address (without brackets).
bool IsIpAddress(const std::string& s);

// ASCII lower case (host names, schemes).
std::string LowerAscii(std::string_view s);

}  // namespace dljob::http
