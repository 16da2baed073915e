#include "kube/watch_decoder.h"

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

// Three events as the API server frames them: one JSON object per line. The second carries
// braces, brackets, quotes, a backslash and a newline inside strings.
const std::string kStream =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"1"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"b}{][\"\\"},)"
    R"("data":{"x":"line1\nline2 {\"nested\": [1,2]}"},"list":[{"a":[]},{}]}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}})"
    "\n";

void ExpectTheThreeEvents(const std::vector<WatchEvent>& events) {
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::kAdded);
  EXPECT_EQ(events[0].object["metadata"]["name"], "a");
  EXPECT_EQ(events[1].type, WatchEvent::Type::kModified);
  EXPECT_EQ(events[1].object["metadata"]["name"], "b}{][\"\\");
  EXPECT_EQ(events[1].object["data"]["x"], "line1\nline2 {\"nested\": [1,2]}");
  EXPECT_EQ(events[1].object["list"].size(), 2u);
  EXPECT_EQ(events[2].type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(events[2].object["metadata"]["resourceVersion"], "12");
}

TEST(WatchDecoder, WholeStreamInOneChunk) {
  WatchDecoder d;
  auto events = d.Feed(kStream);
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  ExpectTheThreeEvents(*events);
  EXPECT_EQ(d.buffered(), 0u);
  EXPECT_TRUE(d.Finish().ok());
}

TEST(WatchDecoder, SplitAtEveryByteBoundary) {
  for (size_t cut = 0; cut <= kStream.size(); ++cut) {
    WatchDecoder d;
    auto first = d.Feed(std::string_view(kStream).substr(0, cut));
    ASSERT_TRUE(first.ok()) << "cut " << cut << ": " << first.error().ToString();
    auto second = d.Feed(std::string_view(kStream).substr(cut));
    ASSERT_TRUE(second.ok()) << "cut " << cut << ": " << second.error().ToString();
    std::vector<WatchEvent> all = std::move(first).value();
    for (WatchEvent& e : *second) all.push_back(std::move(e));
    ExpectTheThreeEvents(all);
    EXPECT_TRUE(d.Finish().ok()) << "cut " << cut;
  }
}

TEST(WatchDecoder, OneByteAtATime) {
  WatchDecoder d;
  std::vector<WatchEvent> all;
  for (char c : kStream) {
    auto events = d.Feed(std::string_view(&c, 1));
    ASSERT_TRUE(events.ok()) << events.error().ToString();
    for (WatchEvent& e : *events) all.push_back(std::move(e));
  }
  ExpectTheThreeEvents(all);
}

TEST(WatchDecoder, ManyEventsPerChunkWithoutNewlines) {
  std::string chunk;
  for (int i = 0; i < 100; ++i) {
    chunk += R"({"type":"DELETED","object":{"metadata":{"name":"p)" + std::to_string(i) + R"("}}})";
    if (i % 3 == 0) chunk += "\r\n  ";
  }
  WatchDecoder d;
  auto events = d.Feed(chunk);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 100u);
  EXPECT_EQ((*events)[99].type, WatchEvent::Type::kDeleted);
  EXPECT_EQ((*events)[99].object["metadata"]["name"], "p99");
}

TEST(WatchDecoder, ErrorEventCarriesTheStatus) {
  WatchDecoder d;
  auto events = d.Feed(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"x("status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired",)x"
      R"("code":410}})"
      "\n");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, WatchEvent::Type::kError);
  EXPECT_EQ((*events)[0].object["code"], 410);
  EXPECT_EQ(WatchEventTypeName((*events)[0].type), std::string("ERROR"));
}

TEST(WatchDecoder, KeepsTheUnfinishedTail) {
  WatchDecoder d;
  auto events = d.Feed(R"({"type":"ADDED","object":{}})"
                       "\n"
                       R"({"type":"MOD)");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 1u);
  EXPECT_EQ(d.buffered(), std::string(R"({"type":"MOD)").size());
  auto end = d.Finish();
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.error().reason, "BadWatchEvent");
  EXPECT_NE(end.error().message.find("middle of an event"), std::string::npos);
}

TEST(WatchDecoder, CorruptStreams) {
  struct Case {
    const char* bytes;
    const char* message_part;
  };
  const Case cases[] = {
      {"hello\n", "expected '{'"},
      {"[1,2]\n", "expected '{'"},
      {R"({"type":"ADDED","object":{}}})", "expected '{'"},  // a stray closing brace
      {R"({"type":"ADDED","object":{"a":1,}})", "not valid JSON"},
      {R"({"type":"ADDED","object":{"a":]}})", "not valid JSON"},
      {R"({"object":{}})", "no \"type\""},
      {R"({"type":"ADDED"})", "has no \"object\""},
      {R"({"type":"ADDED","object":"x"})", "has no \"object\""},
      {R"({"type":"RENAMED","object":{}})", "unknown event type \"RENAMED\""},
  };
  for (const Case& c : cases) {
    WatchDecoder d;
    auto events = d.Feed(c.bytes);
    ASSERT_FALSE(events.ok()) << c.bytes;
    EXPECT_EQ(events.error().http, 0);
    EXPECT_EQ(events.error().reason, "BadWatchEvent");
    EXPECT_NE(events.error().message.find(c.message_part), std::string::npos)
        << c.bytes << " -> " << events.error().message;
    // Once corrupt, always corrupt.
    EXPECT_FALSE(d.Feed(R"({"type":"ADDED","object":{}})").ok());
    EXPECT_FALSE(d.Finish().ok());
  }
}

TEST(WatchDecoder, EmptyAndWhitespaceOnly) {
  WatchDecoder d;
  auto events = d.Feed("");
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(events->empty());
  events = d.Feed("\n \r\n\t");
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(events->empty());
  EXPECT_TRUE(d.Finish().ok());
}

}  // namespace
}  // namespace dljob::kube
