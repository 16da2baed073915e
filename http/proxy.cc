// See proxy.h.
#include "http/proxy.h"

#include <arpa/inet.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "http/http_util.h"
#include "http/url.h"

namespace dljob::http {
namespace {

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

// `url` with the password of its userinfo (if any) replaced, for messages.
std::string HidePassword(std::string_view url) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return std::string(url);
  size_t authority_end = url.find_first_of("/?#", sep + 3);
  size_t at = url.substr(0, authority_end).rfind('@');
  if (at == std::string_view::npos || at < sep) return std::string(url);
  size_t colon = url.find(':', sep + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "xxxxx" + std::string(url.substr(at));
}

// An IP address as 16 bytes (an IPv4 one mapped into IPv6), and whether it is IPv4, as Go sees
// it: an IPv4-mapped IPv6 address counts as IPv4.
struct Ip {
  std::array<unsigned char, 16> bytes{};
  bool v4 = false;

  bool IsLoopback() const {
    if (v4) return bytes[12] == 127;
    static constexpr std::array<unsigned char, 16> kLoopback6{0, 0, 0, 0, 0, 0, 0, 0,
                                                              0, 0, 0, 0, 0, 0, 0, 1};
    return bytes == kLoopback6;
  }
};

std::optional<Ip> ParseIp(const std::string& s) {
  Ip ip;
  unsigned char v4[4];
  if (inet_pton(AF_INET, s.c_str(), v4) == 1) {
    ip.bytes[10] = ip.bytes[11] = 0xff;
    std::memcpy(ip.bytes.data() + 12, v4, 4);
    ip.v4 = true;
    return ip;
  }
  if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) != 1) return std::nullopt;
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  ip.v4 = std::memcmp(ip.bytes.data(), kMapped, sizeof kMapped) == 0;
  return ip;
}

// A CIDR block; written with ':' it is an IPv6 block, which holds no IPv4 address (Go's rule).
struct Cidr {
  Ip base;
  bool v4 = false;
  int bits = 0;  // the prefix length over the 16-byte form

  bool Contains(const Ip& ip) const {
    if (ip.v4 != v4) return false;
    for (int i = 0; i < bits; ++i) {
      int byte = i / 8;
      int mask = 0x80 >> (i % 8);
      if ((ip.bytes[byte] & mask) != (base.bytes[byte] & mask)) return false;
    }
    return true;
  }
};

std::optional<Cidr> ParseCidr(const std::string& s) {
  size_t slash = s.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::optional<Ip> base = ParseIp(s.substr(0, slash));
  std::string_view digits = std::string_view(s).substr(slash + 1);
  if (!base || digits.empty() || digits.size() > 3) return std::nullopt;
  int bits = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    bits = bits * 10 + (c - '0');
  }
  Cidr cidr;
  cidr.v4 = s.find(':') == std::string::npos;
  if (bits > (cidr.v4 ? 32 : 128)) return std::nullopt;
  cidr.base = *base;
  cidr.bits = cidr.v4 ? 96 + bits : bits;
  return cidr;
}

// Go's net.SplitHostPort: "host:port" or "[host]:port"; false when there is no port.
bool SplitHostPort(std::string_view s, std::string* host, std::string* port) {
  if (s.starts_with("[")) {
    size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      return false;
    }
    *host = std::string(s.substr(1, close - 1));
    *port = std::string(s.substr(close + 2));
    return true;
  }
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || s.substr(0, colon).find(':') != std::string_view::npos) {
    return false;
  }
  *host = std::string(s.substr(0, colon));
  *port = std::string(s.substr(colon + 1));
  return true;
}

// Whether one NO_PROXY entry (trimmed, lower-case) covers the target.
bool Matches(const std::string& entry, const std::string& host, const std::optional<Ip>& ip,
             const std::string& port) {
  if (std::optional<Cidr> cidr = ParseCidr(entry)) return ip && cidr->Contains(*ip);
  std::string phost;
  std::string pport;
  if (SplitHostPort(entry, &phost, &pport)) {
    if (phost.empty()) return false;
  } else {
    phost = entry;
  }
  bool port_ok = pport.empty() || pport == port;
  if (std::optional<Ip> pip = ParseIp(phost)) return ip && pip->bytes == ip->bytes && port_ok;
  if (phost.starts_with("*.")) phost.erase(0, 1);
  bool match_host = phost[0] != '.';
  if (match_host) phost.insert(0, ".");
  return (host.ends_with(phost) || (match_host && host == phost.substr(1))) && port_ok;
}

// Go's useProxy: whether a request to host:port goes through the proxy.
bool UseProxy(const std::string& host, const std::string& port, std::string_view no_proxy) {
  std::optional<Ip> ip = ParseIp(host);
  if (host == "localhost" || (ip && ip->IsLoopback())) return false;
  while (!no_proxy.empty()) {
    size_t comma = no_proxy.find(',');
    std::string entry = LowerAscii(TrimSpace(no_proxy.substr(0, comma)));
    no_proxy = comma == std::string_view::npos ? "" : no_proxy.substr(comma + 1);
    if (entry.empty()) continue;
    if (entry == "*" || Matches(entry, host, ip, port)) return false;
  }
  return true;
}

struct Variable {
  std::string name;  // the one that was set, or `upper` when neither was
  std::string value;
};

// The upper-case variable when it is set and non-empty, else the lower-case one (Go's getEnvAny).
Variable Lookup(const Environment& env, const std::string& upper, const std::string& lower) {
  for (const std::string* name : {&upper, &lower}) {
    auto it = env.find(*name);
    if (it != env.end() && !it->second.empty()) return {*name, it->second};
  }
  return {upper, ""};
}

}  // namespace

std::string ProxyUrl::Redacted() const { return scheme + "://" + JoinHostPort(host, port); }

Result<ProxyUrl> ParseProxyUrl(std::string_view url) {
  auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument("invalid proxy URL \"" + HidePassword(url) + "\": " + why);
  };
  UrlParts parts;
  if (std::optional<std::string> why = SplitUrl(url, &parts)) return invalid(*why);
  if (parts.scheme != "http" && parts.scheme != "https" && parts.scheme != "socks5") {
    return invalid("unsupported scheme \"" + parts.scheme + "\" (http, https or socks5)");
  }
  ProxyUrl proxy;
  proxy.scheme = parts.scheme;
  proxy.host = parts.host;
  proxy.port = parts.port.empty() ? DefaultPort(parts.scheme) : *ParsePort(parts.port);
  if (parts.userinfo) {
    size_t colon = parts.userinfo->find(':');
    std::optional<std::string> user = PercentDecodePath(parts.userinfo->substr(0, colon));
    std::optional<std::string> password =
        colon == std::string::npos ? "" : PercentDecodePath(parts.userinfo->substr(colon + 1));
    if (!user || !password) return invalid("malformed percent-escape in the user info");
    proxy.username = std::move(*user);
    proxy.password = std::move(*password);
  }
  return proxy;
}

Result<std::string> ProxyForUrl(std::string_view target_url, const Environment& environment) {
  UrlParts target;
  if (std::optional<std::string> why = SplitUrl(target_url, &target)) {
    return Status::InvalidArgument("URL \"" + HidePassword(target_url) + "\": " + *why);
  }
  if (target.scheme != "http" && target.scheme != "https") return std::string();
  Variable proxy = target.scheme == "https" ? Lookup(environment, "HTTPS_PROXY", "https_proxy")
                                            : Lookup(environment, "HTTP_PROXY", "http_proxy");
  if (proxy.value.empty()) return std::string();
  auto cgi = environment.find("REQUEST_METHOD");
  if (target.scheme == "http" && cgi != environment.end() && !cgi->second.empty()) {
    return Status::InvalidArgument(proxy.name +
                                   ": not used in a CGI program (REQUEST_METHOD is set), where a "
                                   "client could have set it with a Proxy header");
  }
  std::string port = target.port.empty() ? std::to_string(DefaultPort(target.scheme)) : target.port;
  if (!UseProxy(target.host, port, Lookup(environment, "NO_PROXY", "no_proxy").value)) {
    return std::string();
  }
  std::string url =
      proxy.value.find("://") == std::string::npos ? "http://" + proxy.value : proxy.value;
  if (Result<ProxyUrl> parsed = ParseProxyUrl(url); !parsed.ok()) {
    return parsed.status().WithContext(proxy.name);
  }
  return url;
}

Result<std::string> ProxyFromEnvironment(std::string_view target_url) {
  Environment env;
  for (const char* name : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
                           "no_proxy", "REQUEST_METHOD"}) {
    if (const char* value = std::getenv(name)) env.emplace(name, value);
  }
  return ProxyForUrl(target_url, env);
}

}  // namespace dljob::http
