#include "http/http_util.h"

#include <gtest/gtest.h>

namespace dljob::http {
namespace {

TEST(ParseResponseHead, ReadsStatusHeadersAndFraming) {
  ResponseHead head;
  ASSERT_EQ(ParseResponseHead("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                              "Content-Length: 12\r\n",
                              &head),
            std::nullopt);
  EXPECT_EQ(head.status, 201);
  EXPECT_EQ(HeaderValue(head.headers, "content-type"), "application/json");
  EXPECT_EQ(head.content_length, 12u);
  EXPECT_FALSE(head.chunked);
  EXPECT_TRUE(head.keep_alive);

  ASSERT_EQ(ParseResponseHead("HTTP/1.1 200 \r\nTransfer-Encoding: chunked\r\n"
                              "Connection: close\r\n",
                              &head),
            std::nullopt);
  EXPECT_TRUE(head.chunked);
  EXPECT_EQ(head.content_length, std::nullopt);
  EXPECT_FALSE(head.keep_alive);

  ASSERT_EQ(ParseResponseHead("HTTP/1.0 404\r\n", &head), std::nullopt);  // no reason at all
  EXPECT_EQ(head.status, 404);
  EXPECT_FALSE(head.keep_alive);  // HTTP/1.0
}

TEST(ParseResponseHead, RefusesWhatIsMalformed) {
  ResponseHead head;
  for (const char* bad :
       {"HTTP/2 200 OK\r\n", "HTTP/1.1 20 OK\r\n", "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 abc OK\r\n",
        "HTTP/1.1 099 X\r\n", "http/1.1 200 OK\r\n", "", "HTTP/1.1 200 OK\r\nno colon\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n"}) {
    EXPECT_NE(ParseResponseHead(bad, &head), std::nullopt) << bad;
  }
}

TEST(ParseRequestHead, ReadsRequestLineAndHeaders) {
  RequestHead head;
  auto err = ParseRequestHead(
      "GET /api/v1/namespaces/a%20b/pods?watch=1&labelSelector=a%3Db HTTP/1.1\r\n"
      "Host: 127.0.0.1\r\nAccept:  application/json \r\nX-Empty:\r\n",
      &head);
  ASSERT_FALSE(err) << err->message;
  EXPECT_EQ(head.request.method, "GET");
  EXPECT_EQ(head.request.path, "/api/v1/namespaces/a b/pods");
  EXPECT_EQ(head.request.query, "watch=1&labelSelector=a%3Db");
  EXPECT_EQ(HeaderValue(head.request.headers, "accept"), "application/json");
  EXPECT_EQ(HeaderValue(head.request.headers, "x-empty"), "");
  EXPECT_EQ(HeaderValue(head.request.headers, "missing"), "");
  EXPECT_TRUE(head.keep_alive);
  EXPECT_FALSE(head.chunked);
  EXPECT_EQ(head.content_length, 0u);
}

TEST(ParseRequestHead, BodyFramingAndConnection) {
  RequestHead head;
  ASSERT_FALSE(
      ParseRequestHead("POST /x HTTP/1.1\r\nContent-Length: 12\r\n"
                       "Connection: close\r\nExpect: 100-continue",
                       &head));
  EXPECT_EQ(head.content_length, 12u);
  EXPECT_FALSE(head.keep_alive);
  EXPECT_TRUE(head.expect_continue);
  ASSERT_FALSE(ParseRequestHead("POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked", &head));
  EXPECT_TRUE(head.chunked);
  ASSERT_FALSE(ParseRequestHead("GET http://h:1/p?q HTTP/1.0", &head));
  EXPECT_EQ(head.request.path, "/p");
  EXPECT_EQ(head.request.query, "q");
  EXPECT_TRUE(head.http10);
  EXPECT_FALSE(head.keep_alive);
}

TEST(ParseRequestHead, RefusesMalformedHeads) {
  struct Case {
    const char* head;
    int status;
  } cases[] = {
      {"", 400},
      {"GET", 400},
      {"GET /x", 400},
      {"GET  /x HTTP/1.1", 400},
      {"GET /x HTTP/1.1 extra", 400},
      {"G(T /x HTTP/1.1", 400},
      {"GET x HTTP/1.1", 400},
      {"GET /a\x01 HTTP/1.1", 400},
      {"GET /a%2 HTTP/1.1", 400},
      {"GET /a%zz HTTP/1.1", 400},
      {"GET /a%00 HTTP/1.1", 400},
      {"GET /x FTP/1.1", 400},
      {"GET /x HTTP/2.0", 505},
      {"GET /x HTTP/1.1\r\nNoColon", 400},
      {"GET /x HTTP/1.1\r\nBad Name: v", 400},
      {"GET /x HTTP/1.1\r\nA: b\r\n folded", 400},
      {"GET /x HTTP/1.1\r\nContent-Length: -1", 400},
      {"GET /x HTTP/1.1\r\nContent-Length: 1x", 400},
      {"GET /x HTTP/1.1\r\nContent-Length: 99999999999999999999", 400},
      {"GET /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2", 400},
      {"GET /x HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked", 400},
      {"GET /x HTTP/1.1\r\nTransfer-Encoding: gzip", 501},
      {"GET /x HTTP/1.1\r\nExpect: something", 417},
      {"GET /x HTTP/1.1\r\nA: b\nc", 400},
  };
  for (const Case& c : cases) {
    RequestHead head;
    auto err = ParseRequestHead(c.head, &head);
    ASSERT_TRUE(err) << c.head;
    EXPECT_EQ(err->status, c.status) << c.head;
    EXPECT_FALSE(err->message.empty());
  }
}

TEST(PercentDecodePath, DecodesEscapes) {
  EXPECT_EQ(PercentDecodePath("a%2Fb%2fc%41"), "a/b/cA");
  EXPECT_EQ(PercentDecodePath("plain"), "plain");
  EXPECT_FALSE(PercentDecodePath("%"));
  EXPECT_FALSE(PercentDecodePath("%4"));
  EXPECT_FALSE(PercentDecodePath("%g1"));
}

// Feeds `wire` to a decoder `step` bytes at a time, as a socket might deliver it.
ChunkedDecoder::Result DecodeInSteps(std::string_view wire, std::size_t step, std::string* body,
                                     std::string* rest) {
  ChunkedDecoder decoder(100, 64);
  std::string pending;
  for (std::size_t at = 0; at < wire.size(); at += step) {
    pending.append(wire.substr(at, step));
    std::size_t consumed = 0;
    auto r = decoder.Feed(pending, &consumed, body);
    pending.erase(0, consumed);
    if (r != ChunkedDecoder::Result::kNeedMore) {
      *rest = pending + std::string(wire.substr(std::min(wire.size(), at + step)));
      return r;
    }
  }
  return ChunkedDecoder::Result::kNeedMore;
}

TEST(ChunkedDecoder, DecodesWhateverTheSplit) {
  const std::string wire =
      "5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  for (std::size_t step = 1; step <= wire.size(); ++step) {
    std::string body, rest;
    EXPECT_EQ(DecodeInSteps(wire, step, &body, &rest), ChunkedDecoder::Result::kDone) << step;
    EXPECT_EQ(body, "hello 0123456789") << step;
    EXPECT_EQ(rest, "NEXT") << step;
  }
}

TEST(ChunkedDecoder, RefusesBadFramingAndLargeBodies) {
  std::string body, rest;
  EXPECT_EQ(DecodeInSteps("zz\r\n", 1, &body, &rest), ChunkedDecoder::Result::kMalformed);
  EXPECT_EQ(DecodeInSteps("\r\n", 1, &body, &rest), ChunkedDecoder::Result::kMalformed);
  EXPECT_EQ(DecodeInSteps("2\r\nabc\r\n", 1, &body, &rest), ChunkedDecoder::Result::kMalformed);
  EXPECT_EQ(DecodeInSteps(std::string(100, '1'), 1, &body, &rest),
            ChunkedDecoder::Result::kMalformed);
  EXPECT_EQ(DecodeInSteps("65\r\n", 1, &body, &rest), ChunkedDecoder::Result::kTooLarge);
  body.clear();
  EXPECT_EQ(DecodeInSteps("32\r\n" + std::string(50, 'a') + "\r\n33\r\n", 7, &body, &rest),
            ChunkedDecoder::Result::kTooLarge);
  EXPECT_EQ(DecodeInSteps("ffffffffffffffffff\r\n", 1, &body, &rest),
            ChunkedDecoder::Result::kMalformed);
  // A size line over the limit (64 here) is refused however the bytes arrive (found by
  // http/fuzz: it used to pass when it came whole).
  const std::string long_line = "1;" + std::string(80, 'x') + "\r\na\r\n0\r\n\r\n";
  for (std::size_t step : {std::size_t{1}, long_line.size()}) {
    EXPECT_EQ(DecodeInSteps(long_line, step, &body, &rest), ChunkedDecoder::Result::kMalformed)
        << step;
  }
}

TEST(FormatResponse, HeadAndChunks) {
  EXPECT_EQ(FormatResponseHead(200, {{"Content-Type", "a/b"}, {"Content-Length", "9"}},
                               "Content-Length: 2", true),
            "HTTP/1.1 200 OK\r\nContent-Type: a/b\r\nContent-Length: 2\r\n\r\n");
  EXPECT_EQ(FormatResponseHead(404, {}, "", false),
            "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(FormatChunk("x"), "1\r\nx\r\n");
  EXPECT_EQ(FormatChunk(std::string(255, 'y')), "ff\r\n" + std::string(255, 'y') + "\r\n");
}

}  // namespace
}  // namespace dljob::http
