// HttpApi over the real HTTP client (MakeApi: http/socket_client.h) against the loopback HTTP
// server: the wire format end to end — request line, headers, chunked watch framing.
#include <gtest/gtest.h>

#include "http/testing/loopback_http_server.h"
#include "http/testing/loopback_proxy.h"
#include "kube/config.h"
#include "kube/http_api.h"

namespace dljob::kube {
namespace {

using http::testing::LoopbackHttpServer;
using http::testing::ReceivedRequest;

TEST(HttpApiOverSocketClient, WatchEventsArriveAsTheServerSendsThem) {
  LoopbackHttpServer server([](const ReceivedRequest& r, LoopbackHttpServer::Connection& c) {
    c.Write(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n" +
        LoopbackHttpServer::Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                                  "\n{\"type\":\"MODI"));
    if (!c.server().WaitForStep(1)) return;
    c.Write(LoopbackHttpServer::Chunk(R"(FIED","object":{"metadata":{"name":"b"}}})"
                                      "\n") +
            LoopbackHttpServer::Chunk(""));
  });
  Config config;
  config.server = server.url();
  config.token = "s3cret";
  auto api = MakeApi(config);
  ASSERT_TRUE(api.ok()) << api.status().message();
  ListOptions o;
  o.resource_version = "7";
  o.label_selector = "dljob.io/job-name=j";
  auto watch = (*api)->Watch(resources::kPods, "team-a", o);
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  auto first = (*watch)->Next();  // arrives while the server still holds back the rest
  ASSERT_TRUE(first.ok() && *first) << (first.ok() ? "end" : first.error().ToString());
  EXPECT_EQ((*first)->object["metadata"]["name"], "a");
  server.Step();
  auto second = (*watch)->Next();
  ASSERT_TRUE(second.ok() && *second);
  EXPECT_EQ((*second)->type, WatchEvent::Type::kModified);
  EXPECT_EQ((*second)->object["metadata"]["name"], "b");
  auto end = (*watch)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);

  ASSERT_EQ(server.requests().size(), 1u);
  ReceivedRequest got = server.requests()[0];
  EXPECT_EQ(got.method, "GET");
  EXPECT_EQ(got.target,
            "/api/v1/namespaces/team-a/pods?watch=true&labelSelector=dljob.io%2Fjob-"
            "name%3Dj&resourceVersion=7&timeoutSeconds=300&allowWatchBookmarks=true");
  EXPECT_EQ(http::HeaderValue(got.headers, "Authorization"), "Bearer s3cret");
  EXPECT_EQ(http::HeaderValue(got.headers, "Accept"), "application/json");
}

TEST(HttpApiOverSocketClient, CreateConflictSurfacesFromAStatusBody) {
  LoopbackHttpServer server([](const ReceivedRequest& r, LoopbackHttpServer::Connection& c) {
    c.Write(LoopbackHttpServer::Answer(
        409,
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
        R"("message":"pods \"p\" already exists","reason":"AlreadyExists","code":409})",
        "Content-Type: application/json\r\n"));
  });
  Config config;
  config.server = server.url();
  auto api = MakeApi(config);
  ASSERT_TRUE(api.ok());
  auto created = (*api)->Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_FALSE(created.ok());
  EXPECT_TRUE(created.error().IsAlreadyExists());
  EXPECT_EQ(created.error().message, "pods \"p\" already exists");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].method, "POST");
  EXPECT_EQ(Json::parse(server.requests()[0].body), Json({{"metadata", {{"name", "p"}}}}));
  EXPECT_EQ(http::HeaderValue(server.requests()[0].headers, "Content-Type"), "application/json");
  EXPECT_EQ(http::HeaderValue(server.requests()[0].headers, "Authorization"), "");  // no token
}

TEST(MakeHttpClient, NamesTheKubeconfigAndWhatInItIsWrong) {
  Config config;
  config.source = "kubeconfig /k";
  config.server = "ftp://x";
  auto c = MakeHttpClient(config);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("kubeconfig /k: ", 0), 0u) << c.status().message();
  EXPECT_NE(c.status().message().find("must start with https://"), std::string::npos);
  config.server = "https://";
  EXPECT_FALSE(MakeHttpClient(config).ok());
  config.server = "https://10.0.0.1:6443";
  config.ca_data = "-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n";
  c = MakeHttpClient(config);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("kubeconfig /k: certificate-authority"), std::string::npos)
      << c.status().message();
  config.ca_data = "";
  config.client_cert_data = "garbage";
  config.client_key_data = "garbage";
  c = MakeHttpClient(config);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("kubeconfig /k: client-certificate"), std::string::npos);
  config.client_cert_data = config.client_key_data = "";
  EXPECT_TRUE(MakeHttpClient(config).ok());
}

}  // namespace
}  // namespace dljob::kube

namespace dljob::kube {
namespace {

// A kubeconfig's proxy-url sends every request through that proxy (absolute form for http://).
TEST(HttpApiOverSocketClient, AKubeconfigProxyUrlCarriesEveryRequest) {
  LoopbackHttpServer server([](const ReceivedRequest& r, LoopbackHttpServer::Connection& c) {
    c.Write(LoopbackHttpServer::Answer(200, R"({"metadata":{"name":"a"}})"));
  });
  http::testing::LoopbackProxy proxy;
  Result<Config> config =
      ParseKubeconfig({{"/k/config",
                        "current-context: c\n"
                        "contexts: [{name: c, context: {cluster: x}}]\n"
                        "clusters: [{name: x, cluster: {server: '" +
                            server.url() + "', proxy-url: '" + proxy.url() + "'}}]\n"}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->proxy_url, proxy.url());
  auto api = MakeApi(*config);
  ASSERT_TRUE(api.ok()) << api.status().message();
  auto got = (*api)->Get(resources::kPods, "team-a", "a");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ((*got)["metadata"]["name"], "a");
  EXPECT_EQ(proxy.forwarded(),
            std::vector<std::string>{server.url() + "/api/v1/namespaces/team-a/pods/a"});
}

TEST(ParseKubeconfig, AMalformedProxyUrlNamesTheField) {
  Result<Config> config = ParseKubeconfig(
      {{"/k/config",
        "current-context: c\n"
        "contexts: [{name: c, context: {cluster: x}}]\n"
        "clusters: [{name: x, cluster: {server: 'https://h', proxy-url: 'ftp://p:1'}}]\n"}});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("/k/config: clusters[x].cluster.proxy-url: "),
            std::string::npos)
      << config.status().message();
}

}  // namespace
}  // namespace dljob::kube
