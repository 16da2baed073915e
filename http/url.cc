// See url.h.
#include "http/url.h"

#include <arpa/inet.h>

#include <cstring>

namespace dljob::http {

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<int> ParsePort(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return std::nullopt;
  return port;
}

int DefaultPort(std::string_view scheme) {
  if (scheme == "https") return 443;
  if (scheme == "socks5") return 1080;
  return 80;
}

std::optional<std::string> SplitUrl(std::string_view url, UrlParts* out) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return "no scheme";
  out->scheme = LowerAscii(url.substr(0, sep));
  for (char c : out->scheme) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) {
      return "malformed scheme";
    }
  }
  std::string_view authority = url.substr(sep + 3);
  const size_t end = authority.find_first_of("/?#");
  out->rest = end == std::string_view::npos ? "" : std::string(authority.substr(end));
  authority = authority.substr(0, end);
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    out->userinfo = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with("[")) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "missing ']' in host";
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return "unexpected text after ']'";
    if (!rest.empty()) port = rest.substr(1);
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return "an IPv6 address needs brackets";
  }
  if (host.empty()) return "no host";
  for (char c : host) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f || std::strchr("<>\"{}|\\^`[]", c)) {
      return "invalid character in host";
    }
  }
  if (!port.empty() && !ParsePort(port)) return "invalid port \"" + std::string(port) + "\"";
  out->host = LowerAscii(host);
  out->port = std::string(port);
  return std::nullopt;
}

std::string JoinHostPort(std::string_view host, int port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

bool IsIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace dljob::http
