#include "kube/cpprest_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "kube/testing/loopback_http_server.h"

namespace dljob::kube {
namespace {

using testing::LoopbackHttpServer;
using testing::ReceivedRequest;
using Conn = LoopbackHttpServer::Connection;

const char kChunkedHead[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

std::unique_ptr<CpprestTransport> MakeTransport(const std::string& server) {
  Config config;
  config.server = server;
  config.source = "test";
  auto t = CpprestTransport::Create(config);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : nullptr;
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

TEST(CpprestTransport, SendsRequestAndReadsAnswer) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(200, R"({"kind":"Pod"})", "X-Test: yes\r\n"));
  });
  auto transport = MakeTransport(server.url());
  Request req;
  req.path_and_query = "/api/v1/namespaces/a/pods?labelSelector=app%3Dx%2Cy%20in%20%28z%29";
  req.headers = {{"Authorization", "Bearer tok"}, {"Accept", "application/json"}};
  auto resp = transport->Send(req);
  ASSERT_TRUE(resp.ok()) << resp.error().ToString();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body, R"({"kind":"Pod"})");
  EXPECT_EQ(FindHeader(resp->headers, "x-test"), "yes");
  ASSERT_EQ(server.requests().size(), 1u);
  ReceivedRequest got = server.requests()[0];
  EXPECT_EQ(got.method, "GET");
  EXPECT_EQ(got.target, req.path_and_query);
  EXPECT_EQ(FindHeader(got.headers, "Authorization"), "Bearer tok");
  EXPECT_EQ(FindHeader(got.headers, "Host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(got.body, "");
}

TEST(CpprestTransport, SendsBodyWithContentTypeAndReusesTheConnection) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(404, R"({"kind":"Status","code":404})"));
  });
  auto transport = MakeTransport(server.url() + "/");
  Request req;
  req.method = "PATCH";
  req.path_and_query = "/apis/dljob.io/v1alpha1/namespaces/a/dljobs/j/status";
  req.headers = {{"Content-Type", "application/merge-patch+json"}};
  req.body = R"({"status":{"phase":"Running"}})";
  for (int i = 0; i < 2; ++i) {
    auto resp = transport->Send(req);
    ASSERT_TRUE(resp.ok()) << resp.error().ToString();
    EXPECT_EQ(resp->status, 404);  // an HTTP error is a Response, not a transport error
    EXPECT_EQ(resp->body, R"({"kind":"Status","code":404})");
  }
  ASSERT_EQ(server.requests().size(), 2u);
  ReceivedRequest got = server.requests()[1];
  EXPECT_EQ(got.method, "PATCH");
  EXPECT_EQ(got.target, req.path_and_query);
  EXPECT_EQ(FindHeader(got.headers, "Content-Type"), "application/merge-patch+json");
  EXPECT_EQ(got.body, req.body);
}

TEST(CpprestTransport, StreamsChunksAsTheyArrive) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("one\n"));
    if (!c.server().WaitForStep(1)) return;  // "two" is sent only once "one" was read
    c.Write(LoopbackHttpServer::Chunk("two\n"));
    if (!c.server().WaitForStep(2)) return;
    c.Write(LoopbackHttpServer::Chunk("three") + LoopbackHttpServer::Chunk(""));
  });
  auto transport = MakeTransport(server.url());
  Request req;
  req.path_and_query = "/api/v1/pods?watch=true";
  auto resp = transport->Open(req);
  ASSERT_TRUE(resp.ok()) << resp.error().ToString();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(FindHeader(resp->headers, "Content-Type"), "application/json");
  EXPECT_EQ(ReadAtLeast(*resp->body, 4), "one\n");
  server.Step();
  EXPECT_EQ(ReadAtLeast(*resp->body, 4), "two\n");
  server.Step();
  EXPECT_EQ(ReadAtLeast(*resp->body, 5), "three");
  auto end = resp->body->Read();
  ASSERT_TRUE(end.ok()) << end.error().ToString();
  EXPECT_FALSE(*end);
}

TEST(CpprestTransport, CancelUnblocksRead) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("first"));
    c.server().WaitForStep(1);  // never given: holds the stream open until the server stops
  });
  auto transport = MakeTransport(server.url());
  auto resp = transport->Open(Request{});
  ASSERT_TRUE(resp.ok()) << resp.error().ToString();
  BodyStream& body = *resp->body;
  std::promise<void> first_read;
  std::promise<ApiError> second_read;
  std::thread reader([&] {
    EXPECT_EQ(ReadAtLeast(body, 5), "first");
    first_read.set_value();
    auto r = body.Read();  // blocks: nothing more is coming
    second_read.set_value(r.ok() ? ApiError{} : r.error());
  });
  first_read.get_future().wait();
  body.Cancel();
  ApiError e = second_read.get_future().get();
  reader.join();
  EXPECT_EQ(e.http, 0);
  EXPECT_EQ(e.reason, kReasonCancelled);
}

TEST(CpprestTransport, ConnectionCutMidBodyIsAnError) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(std::string(kChunkedHead) + LoopbackHttpServer::Chunk("partial"));
    c.Close();  // no last chunk
  });
  auto transport = MakeTransport(server.url());
  auto resp = transport->Open(Request{});
  ASSERT_TRUE(resp.ok()) << resp.error().ToString();
  EXPECT_EQ(ReadAtLeast(*resp->body, 7), "partial");
  auto next = resp->body->Read();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().http, 0);
  EXPECT_EQ(next.error().reason, kReasonTransportError);
  EXPECT_NE(next.error().message.find("GET " + server.url()), std::string::npos);
}

TEST(CpprestTransport, ReadAllOfAStreamedErrorBody) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) {
    c.Write(LoopbackHttpServer::Answer(410, R"({"kind":"Status","reason":"Expired"})"));
  });
  auto transport = MakeTransport(server.url());
  auto resp = transport->Open(Request{});
  ASSERT_TRUE(resp.ok()) << resp.error().ToString();
  EXPECT_EQ(resp->status, 410);
  auto body = ReadAll(*resp->body);
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  EXPECT_EQ(*body, R"({"kind":"Status","reason":"Expired"})");
}

TEST(CpprestTransport, TimeoutWhenTheServerSaysNothing) {
  LoopbackHttpServer server([](const ReceivedRequest& r, Conn& c) { c.server().WaitForStep(1); });
  auto transport = MakeTransport(server.url());
  Request req;
  req.timeout = std::chrono::milliseconds(200);
  auto resp = transport->Send(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().reason, kReasonTimeout) << resp.error().message;
}

TEST(CpprestTransport, RefusedConnectionIsConnectFailed) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);  // nothing listens on this port now
  auto transport = MakeTransport("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  auto resp = transport->Send(Request{});
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().http, 0);
  EXPECT_EQ(resp.error().reason, kReasonConnectFailed) << resp.error().message;
  auto stream = transport->Open(Request{});
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().reason, kReasonConnectFailed);
}

TEST(CpprestTransport, CreateRejectsBadServersAndBadPem) {
  Config config;
  config.source = "kubeconfig /k";
  config.server = "ftp://x";
  auto t = CpprestTransport::Create(config);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("must start with https://"), std::string::npos);
  config.server = "https://";
  EXPECT_FALSE(CpprestTransport::Create(config).ok());
  config.server = "https://10.0.0.1:6443";
  config.ca_data = "-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n";
  t = CpprestTransport::Create(config);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("kubeconfig /k: certificate-authority"), std::string::npos)
      << t.status().message();
  config.ca_data = "";
  config.client_cert_data = "garbage";
  config.client_key_data = "garbage";
  t = CpprestTransport::Create(config);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("client-certificate"), std::string::npos);
}

}  // namespace
}  // namespace dljob::kube
