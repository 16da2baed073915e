#include "http/socket_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "http/client_connection.h"
#include "http/testing/loopback_http_server.h"
#include "http/testing/loopback_listener.h"

namespace dljob::http {
namespace {

using testing::LoopbackHttpServer;
using testing::ReceivedRequest;
using Conn = LoopbackHttpServer::Connection;

const char kChunkedHead[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

std::unique_ptr<SocketClient> MakeClient(const std::string& base_url) {
  ClientOptions options;
  options.base_url = base_url;
  auto c = SocketClient::Create(options);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(c).value() : nullptr;
}

// Reads until `want` bytes have arrived (a piece may come in more than one Read).
std::string ReadAtLeast(BodyStream& body, size_t want) {
  std::string got;
  while (got.size() < want) {
    auto piece = body.Read();
    if (!piece.ok() || !*piece) break;
    got += **piece;
  }
  return got;
}

TEST(SocketClient, SendsRequestAndReadsAnswer) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(200, R"({"kind":"Pod"})", "X-Test: yes\r\n"));
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.target = "/api/v1/namespaces/a/pods?labelSelector=app%3Dx%2Cy%20in%20%28z%29";
  req.headers = {{"Authorization", "Bearer tok"}, {"Accept", "application/json"}};
  auto resp = client->Send(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body, R"({"kind":"Pod"})");
  EXPECT_EQ(HeaderValue(resp->headers, "x-test"), "yes");
  ASSERT_EQ(server.requests().size(), 1u);
  ReceivedRequest got = server.requests()[0];
  EXPECT_EQ(got.method, "GET");
  EXPECT_EQ(got.target, req.target);
  EXPECT_EQ(HeaderValue(got.headers, "Authorization"), "Bearer tok");
  EXPECT_EQ(HeaderValue(got.headers, "Host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(got.body, "");
}

TEST(SocketClient, SendsBodyWithContentTypeAndReusesTheConnection) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(404, R"({"kind":"Status","code":404})"));
  });
  auto client = MakeClient(server.url() + "/");
  ClientRequest req;
  req.method = "PATCH";
  req.target = "/apis/dljob.io/v1alpha1/namespaces/a/dljobs/j/status";
  req.headers = {{"Content-Type", "application/merge-patch+json"}};
  req.body = R"({"status":{"phase":"Running"}})";
  for (int i = 0; i < 2; ++i) {
    auto resp = client->Send(req);
    ASSERT_TRUE(resp.ok()) << resp.error().message;
    EXPECT_EQ(resp->status, 404);  // an HTTP error is a Response, not a transport error
    EXPECT_EQ(resp->body, R"({"kind":"Status","code":404})");
  }
  ASSERT_EQ(server.requests().size(), 2u);
  ReceivedRequest got = server.requests()[1];
  EXPECT_EQ(got.method, "PATCH");
  EXPECT_EQ(got.target, req.target);
  EXPECT_EQ(HeaderValue(got.headers, "Content-Type"), "application/merge-patch+json");
  EXPECT_EQ(got.body, req.body);
}

TEST(SocketClient, StreamsChunksAsTheyArrive) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("one\n"));
    if (!c.server().WaitForStep(1)) return;  // "two" is sent only once "one" was read
    c.Write(LoopbackHttpServer::Chunk("two\n"));
    if (!c.server().WaitForStep(2)) return;
    c.Write(LoopbackHttpServer::Chunk("three") + LoopbackHttpServer::Chunk(""));
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.target = "/api/v1/pods?watch=true";
  auto resp = client->Open(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(HeaderValue(resp->headers, "Content-Type"), "application/json");
  EXPECT_EQ(ReadAtLeast(*resp->body, 4), "one\n");
  server.Step();
  EXPECT_EQ(ReadAtLeast(*resp->body, 4), "two\n");
  server.Step();
  EXPECT_EQ(ReadAtLeast(*resp->body, 5), "three");
  auto end = resp->body->Read();
  ASSERT_TRUE(end.ok()) << end.error().message;
  EXPECT_FALSE(*end);
}

// Reads with TryRead(), waiting as the stream says, until `want` bytes or the end have arrived;
// counts the tries that found nothing.
std::string TryReadAtLeast(BodyStream& body, size_t want, int* empty_tries = nullptr) {
  std::string got;
  while (got.size() < want) {
    auto ready = body.TryRead();
    if (!ready.ok() || ready->end) break;
    if (!ready->bytes.empty()) {
      got += ready->bytes;
      continue;
    }
    if (empty_tries) ++*empty_tries;
    EXPECT_GE(ready->wait.fd, 0);
    EXPECT_EQ(ready->wait.events, POLLIN);
    pollfd p{ready->wait.fd, ready->wait.events, 0};
    EXPECT_EQ(::poll(&p, 1, 10'000), 1);
  }
  return got;
}

// What one thread following many streams does: try, and poll the socket the stream names.
TEST(SocketClient, TryReadNeverWaitsAndNamesTheSocketToPoll) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("one\n"));
    if (!c.server().WaitForStep(1)) return;
    c.Write(LoopbackHttpServer::Chunk("two\n") + LoopbackHttpServer::Chunk(""));
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.timeout = std::chrono::seconds(30);
  auto resp = client->Open(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  BodyStream& body = *resp->body;
  EXPECT_EQ(TryReadAtLeast(body, 4), "one\n");
  auto nothing = body.TryRead();  // "two" waits for the step: nothing yet, and no waiting
  ASSERT_TRUE(nothing.ok()) << nothing.error().message;
  EXPECT_TRUE(nothing->bytes.empty());
  EXPECT_FALSE(nothing->end);
  EXPECT_GE(nothing->wait.fd, 0);
  const auto now = std::chrono::steady_clock::now();
  EXPECT_GT(nothing->wait.until, now + std::chrono::seconds(20));  // the inactivity limit
  EXPECT_LE(nothing->wait.until, now + std::chrono::seconds(30));
  pollfd quiet{nothing->wait.fd, POLLIN, 0};
  EXPECT_EQ(::poll(&quiet, 1, 50), 0);
  // A quiet stream's connection is kept alive, and a peer gone silently found, by TCP keepalive.
  int keepalive = 0, idle = 0, interval = 0, probes = 0;
  socklen_t len = sizeof(int);
  ::getsockopt(nothing->wait.fd, SOL_SOCKET, SO_KEEPALIVE, &keepalive, &len);
  ::getsockopt(nothing->wait.fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, &len);
  ::getsockopt(nothing->wait.fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, &len);
  ::getsockopt(nothing->wait.fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, &len);
  EXPECT_EQ(keepalive, 1);
  EXPECT_EQ(idle, kKeepAliveIdle.count());
  EXPECT_EQ(interval, kKeepAliveInterval.count());
  EXPECT_EQ(probes, kKeepAliveProbes);
  server.Step();
  int empty_tries = 0;
  EXPECT_EQ(TryReadAtLeast(body, 4, &empty_tries), "two\n");
  EXPECT_LE(empty_tries, 1);
  auto end = body.TryRead();
  ASSERT_TRUE(end.ok()) << end.error().message;
  EXPECT_TRUE(end->end);
  EXPECT_TRUE(end->bytes.empty());
  // Read to its end, the stream gave its connection back: the next request reuses it.
  auto again = client->Send(ClientRequest{});
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.requests()[1].connection, server.requests()[0].connection);
}

TEST(SocketClient, TryReadAfterTheInactivityLimitIsATimeout) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead));
    c.server().WaitForStep(1);  // never given: silent until the server stops
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.timeout = std::chrono::milliseconds(200);
  auto resp = client->Open(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  auto first = resp->body->TryRead();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(first->bytes.empty());
  std::this_thread::sleep_until(first->wait.until);
  auto late = resp->body->TryRead();
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().failure, Failure::kTimeout) << late.error().message;
  resp->body->Cancel();
  auto cancelled = resp->body->TryRead();
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error().failure, Failure::kCancelled);
}

TEST(SocketClient, CancelUnblocksRead) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("first"));
    c.server().WaitForStep(1);  // never given: holds the stream open until the server stops
  });
  auto client = MakeClient(server.url());
  auto resp = client->Open(ClientRequest{});
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  BodyStream& body = *resp->body;
  std::promise<void> first_read;
  std::promise<ClientError> second_read;
  std::thread reader([&] {
    EXPECT_EQ(ReadAtLeast(body, 5), "first");
    first_read.set_value();
    auto r = body.Read();  // blocks: nothing more is coming
    second_read.set_value(r.ok() ? ClientError{} : r.error());
  });
  first_read.get_future().wait();
  body.Cancel();
  ClientError e = second_read.get_future().get();
  reader.join();
  EXPECT_EQ(e.failure, Failure::kCancelled);
}

TEST(SocketClient, ConnectionCutMidBodyIsAnError) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("partial"));
    c.Close();  // no last chunk
  });
  auto client = MakeClient(server.url());
  auto resp = client->Open(ClientRequest{});
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(ReadAtLeast(*resp->body, 7), "partial");
  auto next = resp->body->Read();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().failure, Failure::kTransportError);
  EXPECT_NE(next.error().message.find("GET " + server.url()), std::string::npos);
}

TEST(SocketClient, ReadAllOfAStreamedErrorBody) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(410, R"({"kind":"Status","reason":"Expired"})"));
  });
  auto client = MakeClient(server.url());
  auto resp = client->Open(ClientRequest{});
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->status, 410);
  auto body = ReadAll(*resp->body);
  ASSERT_TRUE(body.ok()) << body.error().message;
  EXPECT_EQ(*body, R"({"kind":"Status","reason":"Expired"})");
}

TEST(SocketClient, TimeoutWhenTheServerSaysNothing) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) { c.server().WaitForStep(1); });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.timeout = std::chrono::milliseconds(200);
  auto resp = client->Send(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().failure, Failure::kTimeout) << resp.error().message;
}

// total_timeout ends an exchange that keeps trickling bytes, which the inactivity limit never
// would; the connection pool of the request's `timeout` is the one it always uses.
TEST(SocketClient, TotalTimeoutEndsAnAnswerThatTrickles) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    if (r.target == "/fast") {
      c.Write(LoopbackHttpServer::Answer(200, "{}"));
      return;
    }
    if (!c.Write(kChunkedHead)) return;
    for (int i = 0; i < 200 && c.Write(LoopbackHttpServer::Chunk("x")); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.target = "/slow";
  req.timeout = std::chrono::seconds(30);
  req.total_timeout = std::chrono::milliseconds(300);
  auto start = std::chrono::steady_clock::now();
  auto resp = client->Send(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().failure, Failure::kTimeout) << resp.error().message;
  EXPECT_NE(resp.error().message.find("total timeout of 300 ms"), std::string::npos)
      << resp.error().message;
  // A failure limit (the trickle would last 10 s), not a timing check.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));

  req.target = "/fast";  // the limit does not outlive its exchange
  auto fast = client->Send(req);
  ASSERT_TRUE(fast.ok()) << fast.error().message;
  EXPECT_EQ(fast->body, "{}");
}

TEST(SocketClient, TotalTimeoutBoundsOpeningAStreamNotReadingIt) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    if (r.target == "/silent") {
      c.server().WaitForStep(1);  // never given: no status line until the server stops
      return;
    }
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("first"));
    c.server().WaitForStep(1);
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.target = "/silent";
  req.timeout = std::chrono::seconds(30);
  req.total_timeout = std::chrono::milliseconds(200);
  auto silent = client->Open(req);
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.error().failure, Failure::kTimeout) << silent.error().message;

  req.target = "/stream";
  auto resp = client->Open(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // past the total timeout
  EXPECT_EQ(ReadAtLeast(*resp->body, 5), "first");
  resp->body->Cancel();
}

TEST(SocketClient, RefusedConnectionIsConnectFailed) {
  int port = 0;
  ::close(testing::BindLoopback(&port));  // nothing listens on this port now
  auto client = MakeClient("http://127.0.0.1:" + std::to_string(port));
  auto resp = client->Send(ClientRequest{});
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().failure, Failure::kConnectFailed) << resp.error().message;
  auto stream = client->Open(ClientRequest{});
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().failure, Failure::kConnectFailed);
  EXPECT_EQ(stream.status().code(), StatusCode::kUnavailable);
}

TEST(SocketClient, CreateRejectsBadUrlsAndBadPem) {
  ClientOptions options;
  options.base_url = "ftp://x";
  auto c = SocketClient::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("must start with https:// or http://"), std::string::npos);
  options.base_url = "https://";
  c = SocketClient::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("\"https://\""), std::string::npos) << c.status().message();
  options.base_url = "https://:6443";
  c = SocketClient::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("\"https://:6443\" is not a valid URL"), std::string::npos)
      << c.status().message();
  for (const char* bad : {"https://h:0", "https://h:65536", "https://h:x", "https://u@h",
                          "https://h/p?q=1", "https://h#f", "https://[::1"}) {
    options.base_url = bad;
    c = SocketClient::Create(options);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find(" is not a valid URL: "), std::string::npos)
        << c.status().message();
  }
  options.base_url = "https://10.0.0.1:6443";
  options.ca_pem = "-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n";
  c = SocketClient::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("certificate-authority is not a valid PEM", 0), 0u)
      << c.status().message();
  options.ca_pem = "";
  options.client_cert_pem = "garbage";
  options.client_key_pem = "garbage";
  c = SocketClient::Create(options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("client-certificate", 0), 0u) << c.status().message();
}

TEST(SocketClient, ABodyWithoutContentTypeGoesAsOctetStreamAndHeadersGoAsGiven) {
  LoopbackHttpServer server(
      [](const ReceivedRequest& r, Conn& c) { c.Write(LoopbackHttpServer::Answer(200, "")); });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.method = "PUT";
  req.target = "/bucket/key%20with%20space?partNumber=1";
  req.headers = {{"Host", "bucket.example.com"}, {"x-amz-date", "20260102T030405Z"}};
  req.body = std::string("\0binary\xff", 8);
  auto resp = client->Send(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  req.method = "POST";  // an empty POST still says how long its body is
  req.body.clear();
  ASSERT_TRUE(client->Send(req).ok());
  ASSERT_EQ(server.requests().size(), 2u);
  ReceivedRequest put = server.requests()[0];
  EXPECT_EQ(put.target, req.target);
  EXPECT_EQ(HeaderValue(put.headers, "Host"), "bucket.example.com");
  EXPECT_EQ(HeaderValue(put.headers, "x-amz-date"), "20260102T030405Z");
  EXPECT_EQ(HeaderValue(put.headers, "Content-Type"), "application/octet-stream");
  EXPECT_EQ(HeaderValue(put.headers, "Content-Length"), "8");
  EXPECT_EQ(put.body, std::string("\0binary\xff", 8));
  EXPECT_EQ(HeaderValue(server.requests()[1].headers, "Content-Length"), "0");
}

TEST(SocketClient, HeadReadsNoBody) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    // A HEAD answer names the length of a body it does not send.
    c.Write("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nETag: \"e\"\r\n\r\n");
  });
  auto client = MakeClient(server.url());
  ClientRequest req;
  req.method = "HEAD";
  req.target = "/bucket/key";
  req.timeout = std::chrono::seconds(5);
  auto resp = client->Send(req);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(HeaderValue(resp->headers, "ETag"), "\"e\"");
  EXPECT_EQ(HeaderValue(resp->headers, "Content-Length"), "1234");
  EXPECT_EQ(resp->body, "");
}

}  // namespace
}  // namespace dljob::http
