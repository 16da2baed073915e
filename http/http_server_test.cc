// HttpServer over real loopback sockets, driven by a raw client (http_test_client.h).
#include "http/http_server.h"

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "http/testing/http_test_client.h"

namespace dljob::http {
namespace {

using testing::ClientResponse;
using testing::Fetch;
using testing::TestClient;

// Answers with what it was asked: "METHOD path ?query body".
void Echo(const HttpRequest& r, ResponseWriter& w) {
  w.Respond(200, {{"Content-Type", "text/plain"}, {"X-Remote", r.remote}},
            r.method + " " + r.path + " ?" + r.query + " " + r.body);
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Serve(Handler handler, HttpLimits limits = {}) {
    HttpServerOptions options;
    options.limits = limits;
    server_ = std::make_unique<HttpServer>(std::move(handler), options);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_GT(server_->port(), 0);
  }
  int port() const { return server_->port(); }
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, SimpleGet) {
  Serve(Echo);
  ClientResponse r = Fetch(port(), "GET /api/v1/a%20b?x=%41 HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "GET /api/v1/a b ?x=%41 ");
  EXPECT_EQ(HeaderValue(r.headers, "Content-Length"), std::to_string(r.body.size()));
  EXPECT_EQ(HeaderValue(r.headers, "X-Remote").rfind("127.0.0.1:", 0), 0u);
}

TEST_F(HttpServerTest, KeepAliveAndPipelining) {
  Serve(Echo);
  TestClient c(port());
  ASSERT_TRUE(c.Send("GET /one HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(c.ReadResponse().body, "GET /one ? ");
  ASSERT_TRUE(
      c.Send("GET /two HTTP/1.1\r\n\r\nPOST /three HTTP/1.1\r\nContent-Length: 1\r\n\r\nz"
             "GET /four HTTP/1.1\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(c.ReadResponse().body, "GET /two ? ");
  EXPECT_EQ(c.ReadResponse().body, "POST /three ? z");
  ClientResponse last = c.ReadResponse();
  EXPECT_EQ(last.body, "GET /four ? ");
  EXPECT_EQ(HeaderValue(last.headers, "Connection"), "close");
  EXPECT_TRUE(c.ReadEof());
}

TEST_F(HttpServerTest, PostBodies) {
  Serve(Echo);
  EXPECT_EQ(Fetch(port(), "POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello").body,
            "POST /p ? hello");
  TestClient c(port());
  ASSERT_TRUE(c.Send("PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"));
  ASSERT_TRUE(c.Send("2\r\nde\r\n0\r\n\r\n"));
  EXPECT_EQ(c.ReadResponse().body, "PUT /c ? abcde");
}

TEST_F(HttpServerTest, ExpectContinueWaitsForTheBody) {
  Serve(Echo);
  TestClient c(port());
  ASSERT_TRUE(c.Send("POST /e HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(c.ReadUntil("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(c.Send("body"));
  EXPECT_EQ(c.ReadResponse().body, "POST /e ? body");
}

TEST_F(HttpServerTest, RefusesMalformedAndOversizedRequests) {
  std::atomic<int> handled{0};
  Serve([&](const HttpRequest& r, ResponseWriter& w) { ++handled, Echo(r, w); },
        HttpLimits{.max_header_bytes = 512, .max_body_bytes = 64});
  struct Case {
    std::string request;
    int status;
  } cases[] = {
      {"NONSENSE\r\n\r\n", 400},
      {"GET /x HTTP/1.1\r\nbad header\r\n\r\n", 400},
      {"GET /%zz HTTP/1.1\r\n\r\n", 400},
      {"GET /x HTTP/3.0\r\n\r\n", 505},
      {"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"GET /x HTTP/1.1\r\nBig: " + std::string(600, 'a') + "\r\n\r\n", 431},
      {"GET /x HTTP/1.1\r\nBig: " + std::string(600, 'a'), 431},
      {"POST /x HTTP/1.1\r\nContent-Length: 65\r\n\r\n", 413},
      {"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + std::string(64, 'a') +
           "\r\n1\r\n",
       413},
      {"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", 400},
  };
  for (const Case& c : cases) {
    TestClient client(port());
    ASSERT_TRUE(client.Send(c.request));
    ClientResponse r = client.ReadResponse();
    EXPECT_EQ(r.status, c.status) << c.request;
    EXPECT_EQ(HeaderValue(r.headers, "Connection"), "close") << c.request;
    EXPECT_TRUE(client.ReadEof()) << c.request;
  }
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(Fetch(port(), "GET /ok HTTP/1.1\r\n\r\n").status, 200);
}

TEST_F(HttpServerTest, HandlerFailuresBecome500AndHeadHasNoBody) {
  Serve([](const HttpRequest& r, ResponseWriter& w) {
    if (r.path == "/throw") throw std::runtime_error("boom");
    if (r.path == "/nothing") return;
    if (r.path == "/empty") return w.Respond(204, {}, "");
    w.Respond(200, {}, "body");
  });
  ClientResponse thrown = Fetch(port(), "GET /throw HTTP/1.1\r\n\r\n");
  EXPECT_EQ(thrown.status, 500);
  EXPECT_NE(thrown.body.find("boom"), std::string::npos);
  EXPECT_EQ(Fetch(port(), "GET /nothing HTTP/1.1\r\n\r\n").status, 500);
  TestClient c(port());
  ASSERT_TRUE(c.Send("HEAD /x HTTP/1.1\r\n\r\nGET /empty HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\n"));
  std::string head = c.ReadUntil("\r\n\r\n");
  EXPECT_NE(head.find("Content-Length: 4\r\n"), std::string::npos) << head;
  ClientResponse empty = c.ReadResponse();  // would read "body" here if HEAD had sent one
  EXPECT_EQ(empty.status, 204);
  EXPECT_EQ(HeaderValue(empty.headers, "Content-Length"), "");
  EXPECT_EQ(c.ReadResponse().body, "body");
}

TEST_F(HttpServerTest, StreamArrivesChunkByChunk) {
  std::latch first_read(1);
  Serve([&](const HttpRequest&, ResponseWriter& w) {
    w.StartStream(200, {{"Content-Type", "application/json"}});
    EXPECT_TRUE(w.Write("{\"n\":1}\n"));
    first_read.wait();  // the client has chunk 1 before chunk 2 exists
    EXPECT_TRUE(w.Write("{\"n\":2}\n"));
  });
  TestClient c(port());
  ASSERT_TRUE(c.Send("GET /watch HTTP/1.1\r\n\r\n"));
  std::string head = c.ReadUntil("\r\n\r\n");
  EXPECT_NE(head.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << head;
  EXPECT_EQ(c.ReadUntil("}\n\r\n"), "8\r\n{\"n\":1}\n\r\n");
  first_read.count_down();
  EXPECT_EQ(c.ReadUntil("}\n\r\n"), "8\r\n{\"n\":2}\n\r\n");
  EXPECT_EQ(c.ReadExactly(5), "0\r\n\r\n");
  ASSERT_TRUE(c.Send("GET /again HTTP/1.1\r\n\r\n"));  // still usable after a stream
  EXPECT_EQ(c.ReadResponse().body, "{\"n\":1}\n{\"n\":2}\n");
}

TEST_F(HttpServerTest, ClientDisconnectEndsTheStream) {
  std::latch closed(1);
  std::promise<bool> connected_after;
  Serve([&](const HttpRequest&, ResponseWriter& w) {
    w.StartStream(200, {});
    w.Write("first");
    closed.wait();
    // The close may still be on its way through the loopback stack; it does arrive.
    while (w.Write("more")) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    connected_after.set_value(w.Connected());
  });
  TestClient c(port());
  ASSERT_TRUE(c.Send("GET /watch HTTP/1.1\r\n\r\n"));
  ASSERT_FALSE(c.ReadUntil("first\r\n").empty());
  c.Close();
  closed.count_down();
  EXPECT_FALSE(connected_after.get_future().get());
}

TEST_F(HttpServerTest, StopEndsOpenStreamsAndIdleConnections) {
  std::latch streaming(1);
  std::atomic<bool> handler_returned{false};
  Serve([&](const HttpRequest&, ResponseWriter& w) {
    w.StartStream(200, {});
    w.Write("event");
    streaming.count_down();
    while (w.Connected()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    handler_returned = true;
  });
  TestClient watcher(port()), idle(port()), half(port());
  ASSERT_TRUE(watcher.Send("GET /watch HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(half.Send("GET /half-a-request HTTP/1.1\r\nHost"));
  ASSERT_TRUE(watcher.ReadUntil("event\r\n").size() > 0);
  streaming.wait();
  server_->Stop();  // must return: the handler sees Connected() false, the others are woken
  EXPECT_TRUE(handler_returned.load());
  EXPECT_TRUE(watcher.ReadEof());
  EXPECT_TRUE(idle.ReadEof());
  EXPECT_TRUE(half.ReadEof());
  EXPECT_FALSE(TestClient(port()).connected());
  server_->Stop();  // idempotent
}

TEST_F(HttpServerTest, ManyConcurrentClients) {
  Serve(Echo);
  constexpr int kClients = 24, kRequests = 20;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      TestClient c(port());
      for (int j = 0; j < kRequests; ++j) {
        std::string path = "/c" + std::to_string(i) + "/r" + std::to_string(j);
        if (!c.Send("GET " + path + " HTTP/1.1\r\n\r\n")) return;
        if (c.ReadResponse().body == "GET " + path + " ? ") ++ok;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
}

// Random bytes and mutated valid requests never crash the server, and it keeps answering.
TEST_F(HttpServerTest, GarbageNeverBreaksTheServer) {
  Serve(Echo, HttpLimits{.max_header_bytes = 1024, .max_body_bytes = 1024});
  const std::string valid =
      "POST /a%20b?c=d HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
      "PUT /t HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
      "3\r\nxyz\r\n0\r\n\r\n";
  std::mt19937 rng(20240611);
  for (int i = 0; i < 400; ++i) {
    std::string input = valid;
    if (i % 4 == 0) {
      input.resize(rng() % 300);
      for (char& ch : input) ch = static_cast<char>(rng());
    } else {
      for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
        std::size_t at = rng() % input.size();
        switch (rng() % 3) {
          case 0:
            input[at] = static_cast<char>(rng());
            break;
          case 1:
            input.erase(at, 1 + rng() % 8);
            break;
          default:
            input.insert(at, std::string(1 + rng() % 4, "\r\n :%0f;"[rng() % 8]));
        }
        if (input.empty()) input = "x";
      }
    }
    TestClient c(port());
    ASSERT_TRUE(c.connected());
    c.Send(input);
    c.ShutdownWrite();
    while (c.ReadResponse().status != 0) {
    }
  }
  EXPECT_EQ(Fetch(port(), "GET /still-up HTTP/1.1\r\n\r\n").body, "GET /still-up ? ");
}

}  // namespace
}  // namespace dljob::http
