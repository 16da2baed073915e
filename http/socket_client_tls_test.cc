// SocketClient over TLS: the CA it trusts, and the name it checks (tls_server_name).
#include <poll.h>

#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "http/socket_client.h"
#include "http/testing/loopback_http_server.h"
#include "http/testing/test_pki.h"

namespace dljob::http {
namespace {

using testing::LoopbackHttpServer;
using testing::ReceivedRequest;
using testing::TestCa;
using Conn = LoopbackHttpServer::Connection;

void AnswerOk(const ReceivedRequest&, Conn& c) { c.Write(LoopbackHttpServer::Answer(200, "ok")); }

// Creation must succeed; the request's outcome is the test's business.
ClientResult<ClientResponse> Get(const ClientOptions& options) {
  auto client = SocketClient::Create(options);
  if (!client.ok()) return ClientError{Failure::kTransportError, client.status().message()};
  ClientRequest req;
  req.target = "/version";
  req.timeout = std::chrono::seconds(10);
  return (*client)->Send(req);
}

ClientOptions Options(const LoopbackHttpServer& server, const TestCa& ca) {
  ClientOptions options;
  options.base_url = server.url();
  options.ca_pem = ca.cert_pem();
  return options;
}

TEST(SocketClientTls, TrustsTheGivenCaAndOnlyIt) {
  TestCa ca;
  LoopbackHttpServer server(AnswerOk, ca.Issue({"localhost"}, {"127.0.0.1"}));
  auto ok = Get(Options(server, ca));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok");

  ClientOptions system_roots = Options(server, ca);
  system_roots.ca_pem.clear();
  auto untrusted = Get(system_roots);
  ASSERT_FALSE(untrusted.ok());
  EXPECT_EQ(untrusted.error().failure, Failure::kTransportError) << untrusted.error().message;

  TestCa other;
  auto wrong_ca = Get(Options(server, other));
  ASSERT_FALSE(wrong_ca.ok());
  EXPECT_EQ(wrong_ca.error().failure, Failure::kTransportError) << wrong_ca.error().message;
  // The reason is OpenSSL's, after the request and the peer (docs/tasks/cluster.md shows one).
  EXPECT_NE(wrong_ca.error().message.find(
                ": TLS handshake with 127.0.0.1:" + std::to_string(server.port()) +
                ": certificate verify failed: "),
            std::string::npos)
      << wrong_ca.error().message;
  ASSERT_EQ(server.requests().size(), 1u);  // only the trusting client got through
}

// The server at 127.0.0.1 has a certificate for kubernetes.test only, as an API server reached
// by its address can have.
TEST(SocketClientTls, TlsServerNameIsTheNameChecked) {
  TestCa ca;
  LoopbackHttpServer server(AnswerOk, ca.Issue({"kubernetes.test"}));
  ClientOptions options = Options(server, ca);

  auto by_address = Get(options);  // the certificate does not name 127.0.0.1
  ASSERT_FALSE(by_address.ok());
  EXPECT_EQ(by_address.error().failure, Failure::kTransportError) << by_address.error().message;

  options.tls_server_name = "kubernetes.test";
  auto named = Get(options);
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->status, 200);

  options.tls_server_name = "other.test";
  auto wrong_name = Get(options);
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_EQ(wrong_name.error().failure, Failure::kTransportError) << wrong_name.error().message;

  options.tls_server_name = "test";  // a suffix of the certificate's name is not the name
  ASSERT_FALSE(Get(options).ok());

  TestCa other;
  ClientOptions other_ca = Options(server, other);
  other_ca.tls_server_name = "kubernetes.test";  // the right name does not excuse the chain
  auto untrusted = Get(other_ca);
  ASSERT_FALSE(untrusted.ok());
  EXPECT_EQ(untrusted.error().failure, Failure::kTransportError) << untrusted.error().message;

  ASSERT_EQ(server.requests().size(), 1u);
  // The server records a refused handshake on its own time, so compare them in no order.
  std::multiset<std::pair<std::string, bool>> handshakes;
  for (const testing::TlsHandshake& h : server.handshakes(5)) {
    handshakes.emplace(h.server_name, h.ok);
  }
  EXPECT_EQ(handshakes,
            (std::multiset<std::pair<std::string, bool>>{{"", false},  // no SNI for an address
                                                         {"kubernetes.test", true},
                                                         {"other.test", false},
                                                         {"test", false},
                                                         {"kubernetes.test", false}}));
}

TEST(SocketClientTls, TlsServerNameWithoutVerificationOnlySetsSni) {
  TestCa ca;
  TestCa other;
  LoopbackHttpServer server(AnswerOk, ca.Issue({"kubernetes.test"}));
  ClientOptions options = Options(server, other);
  options.tls_server_name = "other.test";
  options.insecure_skip_tls_verify = true;
  auto resp = Get(options);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  ASSERT_EQ(server.handshakes().size(), 1u);
  EXPECT_EQ(server.handshakes()[0].server_name, "other.test");
}

TEST(SocketClientTls, TlsServerNameAsAnAddress) {
  TestCa ca;
  LoopbackHttpServer server(AnswerOk, ca.Issue({}, {"10.96.0.1"}));
  ClientOptions options = Options(server, ca);
  options.tls_server_name = "10.96.0.1";
  auto resp = Get(options);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  options.tls_server_name = "10.96.0.2";
  EXPECT_FALSE(Get(options).ok());
  ASSERT_EQ(server.handshakes(2).size(), 2u);
  EXPECT_EQ(server.handshakes()[0].server_name, "");  // no SNI for an address
}

TEST(SocketClientTls, TlsServerNameHoldsForEveryConnectionStreamsAndHostHeaders) {
  TestCa ca;
  LoopbackHttpServer server(
      [](const ReceivedRequest& r, Conn& c) {
        c.Write(LoopbackHttpServer::Answer(200, r.target, "Content-Type: text/plain\r\n"));
      },
      ca.Issue({"*.kubernetes.test"}));
  ClientOptions options = Options(server, ca);
  options.tls_server_name = "api.kubernetes.test";
  auto client = SocketClient::Create(options);
  ASSERT_TRUE(client.ok()) << client.status().message();
  ClientRequest req;
  req.target = "/b";
  req.headers = {{"Host", "elsewhere.example"}};  // sent as given; the checked name stays
  auto b = (*client)->Open(req);  // its connection stays busy until its body is read
  ASSERT_TRUE(b.ok()) << b.error().message;
  req.target = "/a";
  req.headers.clear();
  auto a = (*client)->Send(req);  // so this one needs a connection of its own
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto body = ReadAll(*b->body);
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ(*body, "/b");
  ASSERT_EQ(server.handshakes().size(), 2u);
  for (const auto& h : server.handshakes()) EXPECT_EQ(h.server_name, "api.kubernetes.test");
  EXPECT_EQ(HeaderValue(server.requests()[0].headers, "Host"), "elsewhere.example");

  options.tls_server_name = "a.b.kubernetes.test";  // a wildcard covers one label
  EXPECT_FALSE(Get(options).ok());
}

// TLS keeps decrypted bytes of its own: TryRead() takes all of them before it names the socket,
// so a poller never waits on a quiet socket with a line already decrypted.
TEST(SocketClientTls, TryReadTakesEverythingDecryptedBeforeNamingTheSocket) {
  TestCa ca;
  const std::string big(100 * 1024, 'x');  // more than one TLS record and one read
  LoopbackHttpServer server(
      [&big](const ReceivedRequest&, Conn& c) {
        c.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                LoopbackHttpServer::Chunk(big));
        if (!c.server().WaitForStep(1)) return;
        c.Write(LoopbackHttpServer::Chunk("end") + LoopbackHttpServer::Chunk(""));
      },
      ca.Issue({"localhost"}, {"127.0.0.1"}));
  auto client = SocketClient::Create(Options(server, ca));
  ASSERT_TRUE(client.ok()) << client.status().message();
  auto resp = (*client)->Open(ClientRequest{});
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  std::string got;
  bool stepped = false;
  while (true) {
    auto ready = resp->body->TryRead();
    ASSERT_TRUE(ready.ok()) << ready.error().message;
    if (ready->end) break;
    got += ready->bytes;
    if (!ready->bytes.empty()) continue;
    if (got.size() == big.size() && !stepped) {
      stepped = true;
      server.Step();
    }
    pollfd p{ready->wait.fd, ready->wait.events, 0};
    ASSERT_EQ(::poll(&p, 1, 10'000), 1) << "waiting with " << got.size() << " bytes read";
  }
  EXPECT_EQ(got, big + "end");
}

// A Host header changes what is sent, never which name the certificate must carry.
TEST(SocketClientTls, AHostHeaderChangesNotTheNameChecked) {
  TestCa ca;
  LoopbackHttpServer server(AnswerOk, ca.Issue({"localhost"}, {"127.0.0.1"}));
  auto client = SocketClient::Create(Options(server, ca));
  ASSERT_TRUE(client.ok()) << client.status().message();
  ClientRequest req;
  req.headers = {{"Host", "127.0.0.1:" + std::to_string(server.port())}};
  auto with_port = (*client)->Send(req);
  ASSERT_TRUE(with_port.ok()) << with_port.error().message;
  req.headers = {{"Host", "elsewhere.example"}};
  auto elsewhere = (*client)->Send(req);
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.error().message;
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(HeaderValue(server.requests()[1].headers, "Host"), "elsewhere.example");
}

TEST(SocketClientTls, CreateRejectsAMalformedServerName) {
  ClientOptions options;
  options.base_url = "https://10.0.0.1:6443";
  options.tls_server_name = "kubernetes test";
  auto c = SocketClient::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "tls-server-name \"kubernetes test\" is not a host name or IP address");
  options.tls_server_name = "fd00::1";
  EXPECT_TRUE(SocketClient::Create(options).ok());
}

}  // namespace
}  // namespace dljob::http
