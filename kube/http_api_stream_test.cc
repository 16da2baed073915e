// HttpApi's watches and logs against the scripted HTTP client.
#include <deque>

#include <gtest/gtest.h>

#include "kube/http_api.h"
#include "kube/http_streams.h"
#include "kube/testing/http_api_fixture.h"

namespace dljob::kube {
namespace {

using std::chrono::seconds;
using testing::ChunkedAnswer;
using testing::HttpApiTest;
using testing::StatusAnswer;

const std::string kAdded =
    R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}})";
const std::string kBookmark =
    R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";

TEST_F(HttpApiTest, WatchDecodesEventsAcrossChunks) {
  std::string all = kAdded + "\n" + kBookmark + "\n";
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"),
                    ChunkedAnswer({all.substr(0, 10), all.substr(10, 70), all.substr(80)})};
  ListOptions o;
  o.resource_version = "1";
  auto w = api().Watch(resources::kPods, "a", o);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  EXPECT_EQ(state_.requests.size(), 2u);  // the 503 was retried
  const http::ClientRequest& r = Sent(1);
  EXPECT_EQ(r.target,
            "/api/v1/namespaces/a/pods?watch=true&resourceVersion=1"
            "&timeoutSeconds=300&allowWatchBookmarks=true");
  EXPECT_EQ(r.timeout, seconds(330));  // longer than the server's timeoutSeconds
  auto e1 = (*w)->Next();
  ASSERT_TRUE(e1.ok() && *e1);
  EXPECT_EQ((*e1)->type, WatchEvent::Type::kAdded);
  EXPECT_EQ((*e1)->object["metadata"]["name"], "a");
  auto e2 = (*w)->Next();
  ASSERT_TRUE(e2.ok() && *e2);
  EXPECT_EQ((*e2)->type, WatchEvent::Type::kBookmark);
  auto end = (*w)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);
}

TEST_F(HttpApiTest, WatchTimeoutFromTheCaller) {
  state_.answers = {ChunkedAnswer({})};
  ListOptions o;
  o.timeout_seconds = 20;
  o.allow_bookmarks = false;
  ASSERT_TRUE(api().Watch(resources::kNodes, "", o).ok());
  EXPECT_EQ(Sent().target, "/api/v1/nodes?watch=true&timeoutSeconds=20");
  EXPECT_EQ(Sent().timeout, seconds(50));
}

TEST_F(HttpApiTest, Watch410EitherWayIsGone) {
  Json expired = {{"type", "ERROR"},
                  {"object",
                   {{"kind", "Status"},
                    {"status", "Failure"},
                    {"reason", "Expired"},
                    {"message", "too old resource version: 1 (5)"},
                    {"code", 410}}}};
  state_.answers = {ChunkedAnswer({kAdded + "\n", expired.dump() + "\n"}),
                    StatusAnswer(410, "Expired")};
  HttpApi& a = api();
  auto w = a.Watch(resources::kPods, "a", {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Next().ok());
  auto gone = (*w)->Next();
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.error().IsGone());
  EXPECT_EQ(gone.error().reason, "Expired");
  EXPECT_EQ(gone.error().message, "too old resource version: 1 (5)");

  auto refused = a.Watch(resources::kPods, "a", {});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.error().IsGone());
  EXPECT_EQ(state_.requests.size(), 2u);  // 410 is not retried
}

TEST_F(HttpApiTest, WatchOtherErrorEventsAndCorruptStreams) {
  Json internal = {{"type", "ERROR"}, {"object", {{"kind", "Status"}, {"code", 500}}}};
  state_.answers = {ChunkedAnswer({internal.dump(), "\nnot json"})};
  auto w = api().Watch(resources::kPods, "a", {});
  ASSERT_TRUE(w.ok());
  auto e = (*w)->Next();
  ASSERT_TRUE(e.ok() && *e);
  EXPECT_EQ((*e)->type, WatchEvent::Type::kError);
  auto bad = (*w)->Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().reason, "BadWatchEvent");
  EXPECT_EQ(state_.cancels, 1);
  (*w)->Cancel();
  EXPECT_EQ(state_.cancels, 2);
}

TEST_F(HttpApiTest, WatchCutInsideAnEventIsAnError) {
  state_.answers = {ChunkedAnswer({kAdded.substr(0, 20)})};
  auto w = api().Watch(resources::kPods, "a", {});
  ASSERT_TRUE(w.ok());
  auto e = (*w)->Next();
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("middle of an event"), std::string::npos);
}

TEST_F(HttpApiTest, FollowedLogsArriveLineByLine) {
  state_.answers = {ChunkedAnswer({"step 1\nst", "ep 2\n", "\n", "last"})};
  LogOptions o;
  o.container = "launcher";
  o.follow = true;
  auto lines = api().Logs("a", "p", o);
  ASSERT_TRUE(lines.ok()) << lines.error().ToString();
  EXPECT_EQ(Sent().target, "/api/v1/namespaces/a/pods/p/log?container=launcher&follow=true");
  EXPECT_EQ(http::HeaderValue(Sent().headers, "Accept"), "*/*");
  EXPECT_EQ(Sent().timeout, ApiOptions().follow_timeout);  // an hour: keepalive finds dead peers
  std::vector<std::string> got;
  while (true) {
    auto line = (*lines)->Next();
    ASSERT_TRUE(line.ok());
    if (!*line) break;
    got.push_back(**line);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"step 1", "step 2", "", "last"}));
}

// A body read without waiting: each TryRead gives the next scripted step.
class SteppedBody final : public http::BodyStream {
 public:
  explicit SteppedBody(std::deque<http::ClientResult<http::ReadyBytes>> steps)
      : steps_(std::move(steps)) {}
  http::ClientResult<std::optional<std::string>> Read() override {
    ADD_FAILURE() << "Read() waits; TryNext must not call it";
    return std::optional<std::string>();
  }
  http::ClientResult<http::ReadyBytes> TryRead() override {
    auto step = std::move(steps_.front());
    steps_.pop_front();
    return step;
  }
  void Cancel() override {}

 private:
  std::deque<http::ClientResult<http::ReadyBytes>> steps_;
};

http::ReadyBytes Bytes(std::string b) { return http::ReadyBytes{std::move(b), false, {}}; }

TEST(HttpLineStreamTest, TryNextGivesWholeLinesAndOtherwiseWhatToWaitFor) {
  const Readiness socket{7, 1, std::chrono::steady_clock::now() + seconds(600)};
  HttpLineStream lines(
      std::make_unique<SteppedBody>(std::deque<http::ClientResult<http::ReadyBytes>>{
          Bytes("a\nb"), http::ReadyBytes{"", false, socket}, Bytes("c\n"),
          http::ReadyBytes{"", false, socket}, Bytes("last"), http::ReadyBytes{"", true, {}},
          http::ClientError{http::Failure::kTimeout, "nothing arrived"}}));
  auto a = lines.TryNext();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->line, "a");
  auto wait = lines.TryNext();  // "b" is no whole line yet
  ASSERT_TRUE(wait.ok());
  EXPECT_FALSE(wait->line);
  EXPECT_FALSE(wait->end);
  EXPECT_EQ(wait->wait.fd, 7);
  EXPECT_EQ(wait->wait.until, socket.until);
  auto bc = lines.TryNext();
  ASSERT_TRUE(bc.ok());
  EXPECT_EQ(bc->line, "bc");
  ASSERT_TRUE(lines.TryNext().ok());  // waits again
  auto last = lines.TryNext();        // the body's end completes the last line
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->line, "last");
  auto end = lines.TryNext();
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->end);
  EXPECT_FALSE(end->line);
}

TEST(HttpLineStreamTest, ATransportFailureIsAnApiError) {
  HttpLineStream lines(
      std::make_unique<SteppedBody>(std::deque<http::ClientResult<http::ReadyBytes>>{
          http::ClientError{http::Failure::kTimeout, "GET /log: nothing arrived for 600000 ms"}}));
  auto failed = lines.TryNext();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().http, 0);
  EXPECT_NE(failed.error().message.find("nothing arrived"), std::string::npos);
}

TEST_F(HttpApiTest, LogsOfAMissingPodIsNotFound) {
  state_.answers = {StatusAnswer(404, "NotFound")};
  auto lines = api().Logs("a", "p", {});
  ASSERT_FALSE(lines.ok());
  EXPECT_TRUE(lines.error().IsNotFound());
}

}  // namespace
}  // namespace dljob::kube
