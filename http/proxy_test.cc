#include "http/proxy.h"

#include <arpa/inet.h>

#include <array>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dljob::http {
namespace {

struct Case {
  std::string target;
  Environment env;
  std::string want;        // the proxy, "" for none
  std::string error = {};  // when non-empty: ProxyForUrl fails and its message contains this
};

void Check(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::string env;
    for (const auto& [name, value] : c.env) env += name + "=" + value + " ";
    SCOPED_TRACE(c.target + " with " + env);
    Result<std::string> got = ProxyForUrl(c.target, c.env);
    if (!c.error.empty()) {
      ASSERT_FALSE(got.ok()) << "got " << got.value();
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(got.status().message().find(c.error), std::string::npos) << got.status().message();
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, c.want);
  }
}

const std::string kProxy = "http://proxy.corp:3128";

TEST(ProxyForUrl, PicksTheVariableForTheScheme) {
  Check({
      {"https://10.0.0.1:6443/api", {}, ""},
      {"https://10.0.0.1:6443/api", {{"HTTPS_PROXY", kProxy}}, kProxy},
      {"https://10.0.0.1:6443", {{"https_proxy", kProxy}}, kProxy},
      {"https://10.0.0.1:6443", {{"HTTP_PROXY", kProxy}}, ""},  // no fallback to HTTP_PROXY
      {"http://10.0.0.1:8080", {{"HTTP_PROXY", kProxy}}, kProxy},
      {"http://10.0.0.1:8080", {{"http_proxy", kProxy}}, kProxy},
      {"http://10.0.0.1:8080", {{"HTTPS_PROXY", kProxy}}, ""},
      {"HTTPS://Example.COM", {{"HTTPS_PROXY", kProxy}}, kProxy},
      {"ftp://example.com", {{"HTTPS_PROXY", kProxy}, {"HTTP_PROXY", kProxy}}, ""},
      // The upper-case name wins when set and non-empty.
      {"https://a.example",
       {{"HTTPS_PROXY", "http://up:1"}, {"https_proxy", "http://low:1"}},
       "http://up:1"},
      {"https://a.example", {{"HTTPS_PROXY", ""}, {"https_proxy", "http://low:1"}}, "http://low:1"},
      {"http://a.example",
       {{"HTTP_PROXY", "http://up:1"}, {"http_proxy", "http://low:1"}},
       "http://up:1"},
  });
}

TEST(ProxyForUrl, ValuesWithoutASchemeAreHttpProxies) {
  Check({
      {"https://a.example", {{"HTTPS_PROXY", "proxy.corp:3128"}}, kProxy},
      {"https://a.example", {{"HTTPS_PROXY", "proxy.corp"}}, "http://proxy.corp"},
      {"https://a.example", {{"HTTPS_PROXY", "u:p@proxy.corp:1"}}, "http://u:p@proxy.corp:1"},
      {"https://a.example", {{"HTTPS_PROXY", "https://proxy.corp"}}, "https://proxy.corp"},
      {"https://a.example", {{"HTTPS_PROXY", "socks5://proxy.corp"}}, "socks5://proxy.corp"},
  });
}

TEST(ProxyForUrl, NeverForLocalhostOrLoopback) {
  Environment env = {{"HTTPS_PROXY", kProxy}, {"HTTP_PROXY", kProxy}};
  Check({
      {"https://localhost:6443", env, ""},
      {"http://localhost", env, ""},
      {"https://LocalHost", env, ""},
      {"https://127.0.0.1:6443", env, ""},
      {"https://127.255.0.9", env, ""},
      {"https://[::1]:6443", env, ""},
      {"https://[::ffff:127.0.0.1]:6443", env, ""},
      {"https://localhost.example.com", env, kProxy},  // only the name itself
      {"https://128.0.0.1", env, kProxy},
      {"https://[::2]", env, kProxy},
  });
}

TEST(ProxyForUrl, NoProxyDomains) {
  auto with = [](std::string no_proxy) {
    return Environment{{"HTTPS_PROXY", kProxy}, {"NO_PROXY", std::move(no_proxy)}};
  };
  Check({
      {"https://anything.example", with("*"), ""},
      {"https://10.0.0.1", with("a.b, *"), ""},
      // A bare domain: itself and its subdomains.
      {"https://example.com", with("example.com"), ""},
      {"https://a.b.example.com:6443", with("example.com"), ""},
      {"https://notexample.com", with("example.com"), kProxy},
      {"https://example.com.evil", with("example.com"), kProxy},
      // A leading "." or "*.": subdomains only.
      {"https://example.com", with(".example.com"), kProxy},
      {"https://a.example.com", with(".example.com"), ""},
      {"https://example.com", with("*.example.com"), kProxy},
      {"https://a.example.com", with("*.example.com"), ""},
      // Trimmed, compared without regard to case, empty entries skipped.
      {"https://A.Example.Com", with(" ,, other.org ,  EXAMPLE.com  "), ""},
      // With a port: that port only, the scheme's default when the URL names none.
      {"https://example.com:8443", with("example.com:8443"), ""},
      {"https://example.com", with("example.com:8443"), kProxy},
      {"https://example.com", with("example.com:443"), ""},
      {"http://example.com", {{"HTTP_PROXY", kProxy}, {"NO_PROXY", "example.com:443"}}, kProxy},
      {"http://api.example.com", {{"HTTP_PROXY", kProxy}, {"NO_PROXY", ".example.com:80"}}, ""},
      // Entries that fit no form are ignored, not fatal.
      {"https://example.com", with(":80,[,example.com"), ""},
      {"https://other.org", with(":80,["), kProxy},
  });
}

TEST(ProxyForUrl, NoProxyAddresses) {
  auto with = [](std::string no_proxy) {
    return Environment{{"HTTPS_PROXY", kProxy}, {"NO_PROXY", std::move(no_proxy)}};
  };
  Check({
      {"https://10.0.0.1:6443", with("10.0.0.1"), ""},
      {"https://10.0.0.2:6443", with("10.0.0.1"), kProxy},
      {"https://10.0.0.1:6443", with("10.0.0.1:6443"), ""},
      {"https://10.0.0.1:443", with("10.0.0.1:6443"), kProxy},
      {"https://10.0.0.1", with("10.0.0.1:443"), ""},
      {"https://[fd00::1]:6443", with("fd00::1"), ""},
      {"https://[fd00::1]:6443", with("[fd00::1]:6443"), ""},
      {"https://[fd00::1]:443", with("[fd00::1]:6443"), kProxy},
      {"https://[fd00:0:0::1]", with("FD00::1"), ""},  // the same address written otherwise
      {"https://[::ffff:10.0.0.1]", with("10.0.0.1"), ""},
      // CIDR blocks, any port; names are not resolved.
      {"https://10.200.3.4:6443", with("10.0.0.0/8"), ""},
      {"https://11.0.0.1", with("10.0.0.0/8"), kProxy},
      {"https://kube.internal", with("10.0.0.0/8"), kProxy},
      {"https://[fd12::1]", with("fd00::/8"), ""},
      {"https://[fe00::1]", with("fd00::/8"), kProxy},
      {"https://10.0.0.1", with("::/0"), kProxy},  // an IPv6 block holds no IPv4 address
      {"https://[::ffff:10.0.0.1]", with("10.0.0.0/8"), ""},
      {"https://10.0.0.1", with("10.0.0.0/33"), kProxy},  // not a block: ignored
      // An address entry matches addresses only.
      {"https://10.0.0.1.nip.io", with("10.0.0.1"), kProxy},
  });
}

TEST(ProxyForUrl, UpperCaseNoProxyWins) {
  Check({
      {"https://b.com", {{"HTTPS_PROXY", kProxy}, {"no_proxy", "b.com"}}, ""},
      {"https://b.com",
       {{"HTTPS_PROXY", kProxy}, {"NO_PROXY", "a.com"}, {"no_proxy", "b.com"}},
       kProxy},
  });
}

TEST(ProxyForUrl, MalformedValuesNameTheirVariable) {
  Check({
      {"https://a.example", {{"HTTPS_PROXY", "http://a b:80"}}, "", "HTTPS_PROXY: invalid proxy"},
      {"https://a.example", {{"https_proxy", "ftp://p"}}, "", "https_proxy: invalid proxy URL"},
      {"https://a.example", {{"https_proxy", "ftp://p"}}, "", "unsupported scheme \"ftp\""},
      {"http://a.example", {{"HTTP_PROXY", "p:99999"}}, "", "HTTP_PROXY: invalid proxy URL"},
      {"http://a.example", {{"HTTP_PROXY", "http://"}}, "", "no host"},
      {"http://a.example", {{"HTTP_PROXY", "http://u:%zz@p"}}, "", "percent-escape"},
      // The password stays out of the message.
      {"https://a.example", {{"HTTPS_PROXY", "http://u:secret@p:x"}}, "", "\"http://u:xxxxx@p:x\""},
      // Only the variable that applies is read, and only when the host is not excluded.
      {"http://a.example", {{"HTTPS_PROXY", "ftp://p"}, {"HTTP_PROXY", kProxy}}, kProxy},
      {"https://a.example", {{"HTTPS_PROXY", "ftp://p"}, {"NO_PROXY", "a.example"}}, ""},
      {"https://localhost", {{"HTTPS_PROXY", "ftp://p"}}, ""},
  });
}

TEST(ProxyForUrl, MalformedTargets) {
  Environment env = {{"HTTPS_PROXY", kProxy}};
  Check({
      {"10.0.0.1:6443", env, "", "URL \"10.0.0.1:6443\": no scheme"},
      {"https://", env, "", "no host"},
      {"https://:6443", env, "", "no host"},
      {"https://a.example:http", env, "", "invalid port"},
      {"https://[fd00::1", env, "", "missing ']'"},
      {"https://fd00::1", env, "", "brackets"},
  });
}

TEST(ProxyForUrl, HttpProxyIsRefusedInACgiProgram) {
  Environment env = {{"HTTP_PROXY", kProxy}, {"HTTPS_PROXY", kProxy}, {"REQUEST_METHOD", "GET"}};
  Check({
      {"http://a.example", env, "", "HTTP_PROXY: not used in a CGI program"},
      {"https://a.example", env, kProxy},
  });
}

// Every prefix length against every bit position: an address that differs from the block's base
// in bit k alone is inside the block exactly when k is past the prefix.
TEST(ProxyForUrl, CidrBlocksAgainstEveryBit) {
  const std::array<unsigned char, 4> base4 = {172, 16, 5, 9};
  for (int bits = 0; bits <= 32; ++bits) {
    Environment env = {{"HTTPS_PROXY", kProxy}, {"NO_PROXY", "172.16.5.9/" + std::to_string(bits)}};
    for (int k = 0; k < 32; ++k) {
      std::array<unsigned char, 4> a = base4;
      a[k / 8] ^= static_cast<unsigned char>(0x80 >> (k % 8));
      char text[INET_ADDRSTRLEN];
      ASSERT_NE(inet_ntop(AF_INET, a.data(), text, sizeof text), nullptr);
      Result<std::string> got = ProxyForUrl("https://" + std::string(text) + ":6443", env);
      ASSERT_TRUE(got.ok()) << got.status().message();
      ASSERT_EQ(got->empty(), k >= bits) << text << " in /" << bits;  // never a 127.x address
    }
  }
  std::array<unsigned char, 16> base6{};
  inet_pton(AF_INET6, "fd12:3456:789a:1::5", base6.data());
  for (int bits = 0; bits <= 128; ++bits) {
    Environment env = {{"HTTPS_PROXY", kProxy},
                       {"NO_PROXY", "fd12:3456:789a:1::5/" + std::to_string(bits)}};
    for (int k = 0; k < 128; ++k) {
      std::array<unsigned char, 16> a = base6;
      a[k / 8] ^= static_cast<unsigned char>(0x80 >> (k % 8));
      char text[INET6_ADDRSTRLEN];
      ASSERT_NE(inet_ntop(AF_INET6, a.data(), text, sizeof text), nullptr);
      Result<std::string> got = ProxyForUrl("https://[" + std::string(text) + "]:6443", env);
      ASSERT_TRUE(got.ok()) << got.status().message();
      ASSERT_EQ(got->empty(), k >= bits) << text << " in /" << bits;
    }
  }
}

TEST(ParseProxyUrl, Parts) {
  struct Want {
    std::string url, scheme, username, password, host;
    int port;
    std::string redacted;
  };
  for (const Want& w : std::vector<Want>{
           {"http://proxy.corp", "http", "", "", "proxy.corp", 80, "http://proxy.corp:80"},
           {"https://proxy.corp", "https", "", "", "proxy.corp", 443, "https://proxy.corp:443"},
           {"socks5://proxy.corp", "socks5", "", "", "proxy.corp", 1080,
            "socks5://proxy.corp:1080"},
           {"HTTP://Proxy.Corp:3128/", "http", "", "", "proxy.corp", 3128,
            "http://proxy.corp:3128"},
           {"http://alice:p%40ss%3Aw@10.0.0.9:3128/ignored?x#y", "http", "alice", "p@ss:w",
            "10.0.0.9", 3128, "http://10.0.0.9:3128"},
           {"http://alice@proxy:1", "http", "alice", "", "proxy", 1, "http://proxy:1"},
           {"http://a:b:c@proxy:1", "http", "a", "b:c", "proxy", 1, "http://proxy:1"},
           {"http://[fd00::1]:3128", "http", "", "", "fd00::1", 3128, "http://[fd00::1]:3128"},
           {"http://proxy:", "http", "", "", "proxy", 80, "http://proxy:80"},
       }) {
    SCOPED_TRACE(w.url);
    Result<ProxyUrl> got = ParseProxyUrl(w.url);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->scheme, w.scheme);
    EXPECT_EQ(got->username, w.username);
    EXPECT_EQ(got->password, w.password);
    EXPECT_EQ(got->host, w.host);
    EXPECT_EQ(got->port, w.port);
    EXPECT_EQ(got->Redacted(), w.redacted);
  }
}

TEST(ParseProxyUrl, Errors) {
  for (const auto& [url, why] : std::vector<std::pair<std::string, std::string>>{
           {"proxy.corp:3128", "no scheme"},  // the environment's shorthand is not a proxy-url
           {"ftp://proxy.corp", "unsupported scheme \"ftp\" (http, https or socks5)"},
           {"http://", "no host"},
           {"http://u:p@", "no host"},
           {"http://proxy:0x50", "invalid port \"0x50\""},
           {"http://proxy:65536", "invalid port"},
           {"http://pro xy:80", "invalid character in host"},
           {"http://u:%4@proxy", "malformed percent-escape"},
       }) {
    Result<ProxyUrl> got = ParseProxyUrl(url);
    ASSERT_FALSE(got.ok()) << url;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message().rfind("invalid proxy URL \"", 0), 0u)
        << got.status().message();
    EXPECT_NE(got.status().message().find(why), std::string::npos) << got.status().message();
  }
  Result<ProxyUrl> got = ParseProxyUrl("http://user:hunter2@proxy:bad");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message().find("hunter2"), std::string::npos) << got.status().message();
}

}  // namespace
}  // namespace dljob::http
