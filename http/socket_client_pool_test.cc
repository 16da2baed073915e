// SocketClient's kept-alive connections and the framings of an answer, against the loopback
// server, which numbers the connections requests arrive on.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "http/client_connection.h"
#include "http/socket_client.h"
#include "http/testing/loopback_http_server.h"
#include "http/testing/loopback_listener.h"

namespace dljob::http {
namespace {

using testing::LoopbackHttpServer;
using testing::ReceivedRequest;
using Conn = LoopbackHttpServer::Connection;

std::unique_ptr<SocketClient> MakeClient(const std::string& base_url) {
  ClientOptions options;
  options.base_url = base_url;
  options.default_timeout = std::chrono::seconds(10);
  auto c = SocketClient::Create(options);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : nullptr;
}

ClientRequest Request(const std::string& method, const std::string& target) {
  ClientRequest r;
  r.method = method;
  r.target = target;
  return r;
}

std::vector<int> Connections(const LoopbackHttpServer& server) {
  std::vector<int> out;
  for (const ReceivedRequest& r : server.requests()) out.push_back(r.connection);
  return out;
}

void AnswerTarget(const ReceivedRequest& r, Conn& c) {
  c.Write(LoopbackHttpServer::Answer(200, r.target));
}

TEST(SocketClientPool, RequestsOneAfterAnotherShareOneConnection) {
  LoopbackHttpServer server(AnswerTarget);
  auto client = MakeClient(server.url());
  for (const char* method : {"GET", "POST", "PUT", "DELETE"}) {
    auto resp = client->Send(Request(method, "/x"));
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->body, "/x");
  }
  auto stream = client->Open(Request("GET", "/s"));  // read to its end: its connection returns
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  auto body = ReadAll(*stream->body);
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ(*body, "/s");
  ASSERT_TRUE(client->Send(Request("GET", "/y")).ok());
  EXPECT_EQ(Connections(server), std::vector<int>(6, 1));
}

TEST(SocketClientPool, AnAnswerThatSaysCloseEndsItsConnection) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(200, "a", "Connection: close\r\n"));
    c.Close();
  });
  auto client = MakeClient(server.url());
  ASSERT_TRUE(client->Send(Request("POST", "/a")).ok());
  ASSERT_TRUE(client->Send(Request("POST", "/a")).ok());
  EXPECT_EQ(Connections(server), (std::vector<int>{1, 2}));
}

// The server closes a kept-alive connection without saying so: the next GET still gets its
// answer, on a new connection, whether the close is seen before the request goes or after.
TEST(SocketClientPool, AConnectionTheServerDroppedIsNotUsedAgain) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(200, r.target));
    c.Close();
  });
  auto client = MakeClient(server.url());
  for (int i = 0; i < 5; ++i) {
    auto resp = client->Send(Request("GET", "/g"));
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->body, "/g");
  }
  EXPECT_EQ(Connections(server), (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(SocketClientPool, TwoExchangesAtOnceTakeTwoConnections) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    if (r.target == "/watch") {
      c.Write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
              LoopbackHttpServer::Chunk("event"));
      if (!c.server().WaitForStep(1)) return;
      c.Write(LoopbackHttpServer::Chunk(""));
      return;
    }
    AnswerTarget(r, c);
  });
  auto client = MakeClient(server.url());
  auto watch = client->Open(Request("GET", "/watch"));
  ASSERT_TRUE(watch.ok()) << watch.error().message;
  auto first = watch->body->Read();
  ASSERT_TRUE(first.ok() && *first);
  EXPECT_EQ(**first, "event");
  ASSERT_TRUE(client->Send(Request("GET", "/beside")).ok());
  server.Step();
  auto rest = ReadAll(*watch->body);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(*rest, "");
  ASSERT_TRUE(client->Send(Request("GET", "/after")).ok());  // either connection, both idle
  std::vector<int> got = Connections(server);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], 2);
  EXPECT_LE(got[2], 2);
}

TEST(SocketClientPool, ABaseUrlPathGoesInFrontOfEveryTarget) {
  LoopbackHttpServer server(AnswerTarget);
  auto client = MakeClient(server.url() + "/k8s/clusters/c-1/");
  auto resp = client->Send(Request("GET", "/api/v1/pods?limit=1"));
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->body, "/k8s/clusters/c-1/api/v1/pods?limit=1");
}

TEST(SocketClientPool, InterimAnswersAreSkipped) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX: y\r\n\r\n" +
            LoopbackHttpServer::Answer(201, "made"));
  });
  auto client = MakeClient(server.url());
  auto resp = client->Send(Request("POST", "/p"));
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->body, "made");
}

TEST(SocketClientPool, ABodyWithoutLengthEndsAtTheClose) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end");
    c.Close();
  });
  auto client = MakeClient(server.url());
  for (int i = 0; i < 2; ++i) {
    auto resp = client->Send(Request("GET", "/u"));
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->body, "until the end");
  }
  EXPECT_EQ(Connections(server), (std::vector<int>{1, 2}));
}

TEST(SocketClientPool, NoBodyFor204And304) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(r.target == "/204" ? "HTTP/1.1 204 No Content\r\n\r\n"
                               : "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n");
  });
  auto client = MakeClient(server.url());
  for (const char* target : {"/204", "/304", "/204"}) {
    auto resp = client->Send(Request("GET", target));
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->body, "");
  }
  EXPECT_EQ(Connections(server), std::vector<int>(3, 1));
}

TEST(SocketClientPool, AMalformedAnswerIsATransportError) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(r.target == "/line" ? "HTTP/2 200 OK\r\n\r\n"
                                : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    c.Close();
  });
  auto client = MakeClient(server.url());
  for (const char* target : {"/line", "/chunk"}) {
    auto resp = client->Send(Request("GET", target));
    ASSERT_FALSE(resp.ok()) << target;
    EXPECT_EQ(resp.error().failure, Failure::kTransportError) << resp.error().message;
    EXPECT_EQ(resp.error().message.rfind("GET " + server.url() + target + ": ", 0), 0u)
        << resp.error().message;
  }
}

// A server whose accept queue is full drops new connections' SYNs: connecting hangs until the
// client gives up, which is a connect failure (the request never left), not a read timeout.
TEST(SocketClientPool, AConnectThatHangsIsAConnectFailure) {
  int port = 0;
  int listener = testing::BindLoopback(&port);
  ASSERT_EQ(::listen(listener, 0), 0);  // never accepted
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::vector<int> fillers;  // fill the accept queue (non-blocking: one may hang too)
  for (int i = 0; i < 4; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    fillers.push_back(fd);
  }
  auto client = MakeClient("http://127.0.0.1:" + std::to_string(port));
  ClientRequest req = Request("GET", "/");
  req.timeout = std::chrono::milliseconds(300);
  auto resp = client->Send(req);
  for (int fd : fillers) ::close(fd);
  ::close(listener);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().failure, Failure::kConnectFailed) << resp.error().message;
  EXPECT_NE(resp.error().message.find(": connect to 127.0.0.1:"), std::string::npos)
      << resp.error().message;
  EXPECT_NE(resp.error().message.find(": timed out"), std::string::npos) << resp.error().message;
}

// The time each address of a host gets to connect, as Go's dialer shares it out.
TEST(AddressDeadline, SharesWhatIsLeftWithAFloorOfTwoSeconds) {
  using std::chrono::seconds;
  const Deadline::Clock::time_point now{seconds(1000)};
  EXPECT_EQ(AddressDeadline(now, now + seconds(30), 1), now + seconds(30));
  EXPECT_EQ(AddressDeadline(now, now + seconds(30), 3), now + seconds(10));
  EXPECT_EQ(AddressDeadline(now, now + seconds(30), 30), now + seconds(2));  // not 1 s
  EXPECT_EQ(AddressDeadline(now, now + seconds(1), 3), now + seconds(1));    // all that is left
  EXPECT_EQ(AddressDeadline(now, now - seconds(1), 2), now - seconds(1));    // already past
}

}  // namespace
}  // namespace dljob::http
