// HttpServer over HTTPS (options.tls): a round trip through the real client (socket_client.h)
// trusting only the server's CA, keep-alive over one TLS session, a plain-HTTP client refused,
// and a certificate and key that do not belong together refused by Start().
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "http/http_server.h"
#include "http/socket_client.h"
#include "http/testing/http_test_client.h"
#include "http/testing/test_pki.h"

namespace dljob::http {
namespace {

using testing::TestCa;

void EchoBody(const HttpRequest& r, ResponseWriter& w) {
  w.Respond(200, {{"Content-Type", "text/plain"}}, r.method + " " + r.path + " " + r.body);
}

std::unique_ptr<HttpServer> ServeTls(const testing::TestCertificate& cert) {
  HttpServerOptions options;
  options.tls = CertificateAndKey{cert.cert_pem, cert.key_pem};
  auto server = std::make_unique<HttpServer>(EchoBody, options);
  Status s = server->Start();
  EXPECT_TRUE(s.ok()) << s.message();
  return server;
}

std::unique_ptr<SocketClient> MakeClient(int port, const std::string& ca_pem,
                                         const std::string& server_name = "") {
  ClientOptions options;
  options.base_url = "https://127.0.0.1:" + std::to_string(port);
  options.ca_pem = ca_pem;
  options.tls_server_name = server_name;
  auto client = SocketClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status().message();
  return client.ok() ? std::move(*client) : nullptr;
}

ClientResult<ClientResponse> Post(Client& client, const std::string& path,
                                  const std::string& body) {
  ClientRequest req;
  req.method = "POST";
  req.target = path;
  req.body = body;
  req.timeout = std::chrono::seconds(10);
  return client.Send(req);
}

TEST(HttpServerTls, RoundTripWithTheCa) {
  TestCa ca;
  auto server = ServeTls(ca.Issue({"webhook.test"}, {"127.0.0.1"}));
  auto client = MakeClient(server->port(), ca.cert_pem());
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 3; ++i) {  // one client: the requests share its connection
    auto r = Post(*client, "/validate-dljob", "body " + std::to_string(i));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "POST /validate-dljob body " + std::to_string(i));
  }
  // A body larger than one TLS record (16 KiB) arrives whole.
  std::string big(100'000, 'x');
  auto r = Post(*client, "/big", big);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->body, "POST /big " + big);
}

TEST(HttpServerTls, TheCertificateNamesTheServer) {
  TestCa ca;
  auto server = ServeTls(ca.Issue({"dljob-webhook.dljob-system.svc"}));
  auto by_name = MakeClient(server->port(), ca.cert_pem(), "dljob-webhook.dljob-system.svc");
  ASSERT_NE(by_name, nullptr);
  auto ok = Post(*by_name, "/x", "");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->status, 200);

  auto other_name = MakeClient(server->port(), ca.cert_pem(), "other.dljob-system.svc");
  ASSERT_NE(other_name, nullptr);
  EXPECT_FALSE(Post(*other_name, "/x", "").ok());
  TestCa other_ca;
  auto other_trust =
      MakeClient(server->port(), other_ca.cert_pem(), "dljob-webhook.dljob-system.svc");
  ASSERT_NE(other_trust, nullptr);
  EXPECT_FALSE(Post(*other_trust, "/x", "").ok());
}

TEST(HttpServerTls, PlainHttpGetsNoAnswer) {
  TestCa ca;
  auto server = ServeTls(ca.Issue({"localhost"}, {"127.0.0.1"}));
  testing::ClientResponse r =
      testing::Fetch(server->port(), "GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(r.status, 200);
  // The server is still there for a TLS client.
  auto client = MakeClient(server->port(), ca.cert_pem());
  ASSERT_NE(client, nullptr);
  auto ok = Post(*client, "/after", "");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpServerTls, StartRefusesAKeyOfAnotherCertificate) {
  TestCa ca;
  testing::TestCertificate a = ca.Issue({"a.test"});
  testing::TestCertificate b = ca.Issue({"b.test"});
  HttpServerOptions options;
  options.tls = CertificateAndKey{a.cert_pem, b.key_pem};
  HttpServer server(EchoBody, options);
  Status s = server.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the TLS key does not belong to the certificate"), std::string::npos)
      << s.message();

  options.tls = CertificateAndKey{"not PEM", a.key_pem};
  HttpServer garbage(EchoBody, options);
  s = garbage.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a PEM certificate"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace dljob::http
