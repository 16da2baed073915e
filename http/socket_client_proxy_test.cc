// SocketClient through an HTTP proxy (proxy_url): CONNECT tunnels for https://, absolute-form
// requests for http://, proxy credentials, and the failures that name the proxy.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "http/socket_client.h"
#include "http/testing/loopback_http_server.h"
#include "http/testing/loopback_listener.h"
#include "http/testing/loopback_proxy.h"
#include "http/testing/test_pki.h"

namespace dljob::http {
namespace {

using testing::LoopbackHttpServer;
using testing::LoopbackProxy;
using testing::ReceivedRequest;
using testing::TestCa;
using Conn = LoopbackHttpServer::Connection;

const char kChunkedHead[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

// Answers with the request's target; a target ending in "watch" gets a chunked body in two
// pieces, the second only after the test's first Step().
void Echo(const ReceivedRequest& r, Conn& c) {
  if (r.target.size() >= 5 && r.target.substr(r.target.size() - 5) == "watch") {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("one\n"));
    if (!c.server().WaitForStep(1)) return;
    c.Write(LoopbackHttpServer::Chunk("two\n") + LoopbackHttpServer::Chunk(""));
    return;
  }
  c.Write(LoopbackHttpServer::Answer(200, r.method + " " + r.target + " " + r.body));
}

// A port nothing listens on.
int ClosedPort() {
  testing::LoopbackListener listener([](int) {});
  int port = listener.port();
  listener.Stop();
  return port;
}

std::unique_ptr<SocketClient> MakeClient(const ClientOptions& options) {
  auto c = SocketClient::Create(options);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : nullptr;
}

ClientRequest Get(const std::string& target) {
  ClientRequest req;
  req.target = target;
  req.timeout = std::chrono::seconds(10);
  return req;
}

// Streams "/watch" and checks both pieces arrive, the second after it was let go.
void ExpectStream(SocketClient& client, LoopbackHttpServer& server) {
  auto resp = client.Open(Get("/api/v1/pods?watch"));
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  auto first = resp->body->Read();
  ASSERT_TRUE(first.ok() && *first) << (first.ok() ? "end" : first.error().message);
  EXPECT_EQ(**first, "one\n");
  server.Step();
  auto rest = ReadAll(*resp->body);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(*rest, "two\n");
}

TEST(SocketClientProxy, HttpsGoesThroughAConnectTunnel) {
  TestCa ca;
  LoopbackHttpServer server(Echo, ca.Issue({"localhost"}, {"127.0.0.1"}));
  LoopbackProxy proxy;
  ClientOptions options;
  options.base_url = server.url();
  options.ca_pem = ca.cert_pem();
  options.proxy_url = proxy.url();
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  const std::string target = "/api/v1/namespaces/a/pods?labelSelector=app%3Dx%2Cy%20in%20%28z%29";
  // One request after another: every one rides the first tunnel, kept alive.
  for (int i = 0; i < 3; ++i) {
    auto resp = client->Send(Get(target));
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->body, "GET " + target + " ");
  }
  ClientRequest other_timeout = Get("/other");
  other_timeout.timeout = std::chrono::seconds(9);  // a timeout is per request, not per pool
  ASSERT_TRUE(client->Send(other_timeout).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectStream(*client, server));
  // Two at once: the second needs a tunnel of its own.
  auto held = client->Open(Get("/held"));
  ASSERT_TRUE(held.ok()) << held.error().message;
  ASSERT_TRUE(client->Send(Get("/beside")).ok());
  ASSERT_TRUE(ReadAll(*held->body).ok());
  const std::string authority = "127.0.0.1:" + std::to_string(server.port());
  std::vector<std::string> tunnels = proxy.tunnels();
  EXPECT_EQ(tunnels.size(), 2u);
  for (const std::string& t : tunnels) EXPECT_EQ(t, authority);
  EXPECT_EQ(server.handshakes().size(), tunnels.size());  // every TLS session was tunnelled
  EXPECT_TRUE(proxy.forwarded().empty());
  std::vector<ReceivedRequest> got = server.requests();
  ASSERT_EQ(got.size(), 7u);
  EXPECT_EQ(got[0].target, target);  // origin form inside the tunnel
  EXPECT_EQ(HeaderValue(got[0].headers, "Host"), authority);
  EXPECT_EQ(HeaderValue(got[0].headers, "Proxy-Authorization"), "");
}

TEST(SocketClientProxy, HttpGoesInAbsoluteForm) {
  LoopbackHttpServer server(Echo);
  LoopbackProxy proxy;
  ClientOptions options;
  options.base_url = server.url();
  options.proxy_url = proxy.url() + "/";
  auto client = MakeClient(options);
  ASSERT_NE(client, nullptr);
  const std::string target = "/api/v1/pods?labelSelector=app%3Dx%2Cy%20in%20%28z%29";
  ASSERT_TRUE(client->Send(Get(target)).ok());
  ClientRequest patch = Get("/apis/x/status");
  patch.method = "PATCH";
  patch.headers = {{"Content-Type", "application/merge-patch+json"}};
  patch.body = R"({"status":{}})";
  auto resp = client->Send(patch);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->body, "PATCH /apis/x/status " + patch.body);
  ASSERT_NO_FATAL_FAILURE(ExpectStream(*client, server));
  EXPECT_EQ(proxy.forwarded(),
            (std::vector<std::string>{server.url() + target, server.url() + "/apis/x/status",
                                      server.url() + "/api/v1/pods?watch"}));
  EXPECT_TRUE(proxy.tunnels().empty());
  std::vector<ReceivedRequest> got = server.requests();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].target, target);
  EXPECT_EQ(HeaderValue(got[0].headers, "Host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(got[1].body, patch.body);
}

TEST(SocketClientProxy, CredentialsFromTheUrl) {
  TestCa ca;
  LoopbackHttpServer tls_server(Echo, ca.Issue({}, {"127.0.0.1"}));
  LoopbackHttpServer plain_server(Echo);
  LoopbackProxy proxy({"alice", "p@ss:w"});
  const std::string at = "@127.0.0.1:" + std::to_string(proxy.port());
  for (const std::string& server_url : {tls_server.url(), plain_server.url()}) {
    SCOPED_TRACE(server_url);
    ClientOptions options;
    options.base_url = server_url;
    options.ca_pem = ca.cert_pem();
    options.proxy_url = "http://alice:p%40ss%3Aw" + at;
    auto resp = MakeClient(options)->Send(Get("/x"));
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->status, 200);
    EXPECT_EQ(proxy.refused(), 0);
  }

  ClientOptions wrong;
  wrong.base_url = tls_server.url();
  wrong.ca_pem = ca.cert_pem();
  wrong.proxy_url = "http://alice:guess" + at;
  auto refused = MakeClient(wrong)->Send(Get("/x"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().failure, Failure::kConnectFailed) << refused.error().message;
  EXPECT_NE(refused.error().message.find("407"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("via proxy http://127.0.0.1:"), std::string::npos);
  EXPECT_EQ(refused.error().message.find("guess"), std::string::npos);
  wrong.proxy_url = proxy.url();  // no credentials at all
  auto stream = MakeClient(wrong)->Open(Get("/x"));
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().failure, Failure::kConnectFailed) << stream.error().message;

  wrong.base_url = plain_server.url();  // a plain-HTTP proxy's refusal is an answer
  auto answered = MakeClient(wrong)->Send(Get("/x"));
  ASSERT_TRUE(answered.ok()) << answered.error().message;
  EXPECT_EQ(answered->status, 407);
  EXPECT_EQ(HeaderValue(answered->headers, "Proxy-Authenticate"), "Basic realm=\"loopback\"");
  EXPECT_EQ(proxy.refused(), 3);
  EXPECT_EQ(tls_server.requests().size() + plain_server.requests().size(), 2u);
}

// The servers are up: only going through the proxy fails.
TEST(SocketClientProxy, AnUnreachableProxyIsConnectFailedNamingIt) {
  const std::string proxy_url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  TestCa ca;
  LoopbackHttpServer tls_server(Echo, ca.Issue({}, {"127.0.0.1"}));
  LoopbackHttpServer plain_server(Echo);
  for (const std::string& base_url : {tls_server.url(), plain_server.url()}) {
    SCOPED_TRACE(base_url);
    ClientOptions options;
    options.base_url = base_url;
    options.ca_pem = ca.cert_pem();
    options.proxy_url = proxy_url;
    auto client = MakeClient(options);
    ASSERT_NE(client, nullptr);
    auto resp = client->Send(Get("/x"));
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.error().failure, Failure::kConnectFailed) << resp.error().message;
    EXPECT_NE(resp.error().message.find("GET " + base_url + "/x via proxy " + proxy_url),
              std::string::npos)
        << resp.error().message;
    auto stream = client->Open(Get("/x"));
    ASSERT_FALSE(stream.ok());
    EXPECT_EQ(stream.error().failure, Failure::kConnectFailed) << stream.error().message;
  }
  EXPECT_TRUE(tls_server.handshakes().empty());
  EXPECT_TRUE(plain_server.requests().empty());
}

TEST(SocketClientProxy, AProxyThatCannotReachTheServer) {
  LoopbackProxy proxy;
  const std::string closed = "127.0.0.1:" + std::to_string(ClosedPort());
  ClientOptions options;
  options.base_url = "https://" + closed;
  options.proxy_url = proxy.url();
  auto tunnel = MakeClient(options)->Send(Get("/x"));
  ASSERT_FALSE(tunnel.ok());
  EXPECT_EQ(tunnel.error().failure, Failure::kConnectFailed) << tunnel.error().message;
  EXPECT_NE(tunnel.error().message.find("502"), std::string::npos) << tunnel.error().message;
  options.base_url = "http://" + closed;
  auto answered = MakeClient(options)->Send(Get("/x"));
  ASSERT_TRUE(answered.ok()) << answered.error().message;
  EXPECT_EQ(answered->status, 502);
}

TEST(SocketClientProxy, TlsServerNameThroughATunnel) {
  TestCa ca;
  LoopbackHttpServer server(Echo, ca.Issue({"kubernetes.test"}));
  LoopbackProxy proxy;
  ClientOptions options;
  options.base_url = server.url();
  options.ca_pem = ca.cert_pem();
  options.proxy_url = proxy.url();
  options.tls_server_name = "kubernetes.test";
  auto resp = MakeClient(options)->Send(Get("/x"));
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  options.tls_server_name = "";
  auto unnamed = MakeClient(options)->Send(Get("/x"));
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().failure, Failure::kTransportError) << unnamed.error().message;
  ASSERT_EQ(server.handshakes(2).size(), 2u);
  EXPECT_EQ(server.handshakes()[0].server_name, "kubernetes.test");
  EXPECT_EQ(proxy.tunnels().size(), 2u);
}

TEST(SocketClientProxy, CreateRefusesProxiesItCannotUse) {
  for (const auto& [url, why] : std::vector<std::pair<std::string, std::string>>{
           {"https://proxy.corp:3128",
            "proxy URL \"https://proxy.corp:3128\": https:// proxies are not supported"},
           {"socks5://u:pw@proxy.corp",
            "proxy URL \"socks5://proxy.corp:1080\": socks5:// proxies are not supported"},
           {"proxy.corp:3128", "invalid proxy URL \"proxy.corp:3128\": no scheme"},
           {"http://u:pw@proxy corp", "invalid proxy URL \"http://u:xxxxx@proxy corp\""},
       }) {
    ClientOptions options;
    options.base_url = "https://10.0.0.1:6443";
    options.proxy_url = url;
    auto c = SocketClient::Create(options);
    ASSERT_FALSE(c.ok()) << url;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c.status().message().rfind(why, 0), 0u) << c.status().message();
  }
}

}  // namespace
}  // namespace dljob::http
