// HTTP proxies for the client side: what a proxy URL may say (ParseProxyUrl), and which proxy, if
// any, a request to a given URL goes through when the proxy comes from the environment
// (ProxyForUrl), by the rules kubectl follows (Go's net/http ProxyFromEnvironment, that is
// golang.org/x/net/http/httpproxy):
//
//   - https:// targets use HTTPS_PROXY, http:// targets HTTP_PROXY; the upper-case name wins when
//     both are set and non-empty, then the lower-case one (https_proxy, http_proxy). An https
//     target never falls back to HTTP_PROXY. Other schemes get no proxy.
//   - A value without "://" is an http:// proxy ("proxy.corp:3128"). Schemes: http, https,
//     socks5 (whether a client can use the latter two is the client's business: SocketClient
//     cannot).
//   - No proxy for "localhost" or a loopback address (127.0.0.0/8, ::1), whatever NO_PROXY says.
//   - NO_PROXY (or no_proxy) is a comma-separated list; entries are trimmed and compared without
//     regard to case: "*" (no proxy for anything); an IP address ("10.0.0.1", "::1"); a CIDR
//     block ("10.0.0.0/8", "fd00::/8"), any port; a domain, which matches itself and every
//     subdomain ("example.com" matches "example.com" and "a.example.com"); a domain with a
//     leading "." or "*.", which matches subdomains only (".example.com" matches
//     "a.example.com", not "example.com"). An IP address or domain may carry a port
//     ("10.0.0.1:6443", "example.com:8443", "[::1]:80"): then it matches that port only,
//     compared with the target's port or its scheme's default (80, 443). Entries that fit none
//     of these are ignored, as Go ignores them.
//   - Where REQUEST_METHOD is set (a CGI program, where a client could set HTTP_PROXY through
//     the "Proxy:" header), HTTP_PROXY is refused with an error rather than used.
//
// Where dljob differs from Go: a malformed proxy value is an error naming the variable
// (`HTTPS_PROXY: invalid proxy URL "http://a b": ...`) where Go silently goes direct, but only
// when that variable would be used for the target; non-ASCII host names are compared as given
// (Go converts them to punycode first); "localhost" is matched without regard to case.
//
// All functions are pure except ProxyFromEnvironment, which reads the process environment
// (getenv: safe unless another thread changes the environment at the same time).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace dljob::http {

struct ProxyUrl {
  std::string scheme;    // "http", "https" or "socks5", lower-case
  std::string username;  // percent-decoded userinfo; both empty when the URL has none
  std::string password;
  std::string host;  // lower-case; an IPv6 address without its brackets
  int port = 0;      // the URL's, else the scheme's default: http 80, https 443, socks5 1080

  // "scheme://host:port" without the credentials: what messages may show.
  std::string Redacted() const;
};

// Parses "scheme://[user[:password]@]host[:port]" (a kubeconfig's proxy-url); a path, query or
// fragment after the authority is ignored, as Go ignores it. An unknown scheme, a missing host, a
// bad port or a bad percent-escape in the userinfo is kInvalidArgument naming the URL (with its
// password hidden).
Result<ProxyUrl> ParseProxyUrl(std::string_view url);

// Environment variables by name, as ProxyForUrl reads them.
using Environment = std::map<std::string, std::string, std::less<>>;

// The proxy URL for a request to `target_url` ("https://10.0.0.1:6443/api"), by the rules above:
// the variable's value (with "http://" put in front when it names no scheme), or "" for a direct
// connection (also for a scheme other than http and https). kInvalidArgument for a target that
// is not an absolute URL with a host, for a malformed proxy value (naming the variable) and for
// HTTP_PROXY in a CGI environment.
Result<std::string> ProxyForUrl(std::string_view target_url, const Environment& environment);

// ProxyForUrl with the process's environment (HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy,
// NO_PROXY, no_proxy, REQUEST_METHOD).
Result<std::string> ProxyFromEnvironment(std::string_view target_url);

}  // namespace dljob::http
