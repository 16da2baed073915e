#include "operator/kube/http_api.h"

#include <deque>

#include <gtest/gtest.h>

namespace dljob::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// One scripted answer of the fake transport: a transport error, or a status with body chunks.
struct Answer {
  int status = 200;
  std::vector<std::string> chunks;
  Headers headers;
  std::optional<ApiError> error;
};
Answer Stream(std::vector<std::string> chunks) {
  Answer a;
  a.chunks = std::move(chunks);
  return a;
}
Answer Ok(const std::string& body) { return Stream({body}); }
Answer StatusAnswer(int code, const std::string& reason, Headers headers = {}) {
  Json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
            {"message", "m" + std::to_string(code)}, {"reason", reason}, {"code", code}};
  Answer a = Stream({s.dump()});
  a.status = code;
  a.headers = std::move(headers);
  return a;
}
Answer Fail(const char* reason) {
  Answer a;
  a.error = ApiError{0, reason, "no answer"};
  return a;
}

struct FakeState {
  std::vector<Request> requests;
  std::deque<Answer> answers;
  int cancels = 0;
};

class FakeBody : public BodyStream {
 public:
  FakeBody(std::vector<std::string> chunks, FakeState& state)
      : chunks_(chunks.begin(), chunks.end()), state_(state) {}
  ApiResult<std::optional<std::string>> Read() override {
    if (chunks_.empty()) return std::optional<std::string>();
    std::string c = chunks_.front();
    chunks_.pop_front();
    return std::optional<std::string>(c);
  }
  void Cancel() override { ++state_.cancels; }

 private:
  std::deque<std::string> chunks_;
  FakeState& state_;
};

class FakeTransport : public Transport {
 public:
  explicit FakeTransport(FakeState& s) : s_(s) {}
  ApiResult<Response> Send(const Request& request) override {
    Answer a = Next(request);
    if (a.error) return *a.error;
    std::string body;
    for (const std::string& c : a.chunks) body += c;
    return Response{a.status, a.headers, body};
  }
  ApiResult<StreamResponse> Open(const Request& request) override {
    Answer a = Next(request);
    if (a.error) return *a.error;
    return StreamResponse{a.status, a.headers, std::make_unique<FakeBody>(a.chunks, s_)};
  }

 private:
  Answer Next(const Request& request) {
    s_.requests.push_back(request);
    EXPECT_FALSE(s_.answers.empty()) << "unexpected " << request.method << " "
                                     << request.path_and_query;
    if (s_.answers.empty()) return Fail(kReasonTransportError);
    Answer a = s_.answers.front();
    s_.answers.pop_front();
    return a;
  }
  FakeState& s_;
};

class RotatingTokens : public TokenSource {
 public:
  std::string Token() override { return "tok" + std::to_string(++n_); }

 private:
  int n_ = 0;
};

class HttpApiTest : public ::testing::Test {
 protected:
  HttpApi& api(ApiOptions options = Options()) {
    api_ = std::make_unique<HttpApi>(std::make_unique<FakeTransport>(state_),
                                     std::make_unique<StaticTokenSource>("tok"), options, clock_);
    return *api_;
  }
  static ApiOptions Options() {
    ApiOptions o;
    o.qps = 0;  // unlimited unless a test says otherwise
    o.retry.jitter = 0;
    o.retry.initial_backoff = milliseconds(100);
    return o;
  }
  const Request& Sent(size_t i = 0) {
    EXPECT_LT(i, state_.requests.size());
    return state_.requests.at(i);
  }

  FakeState state_;
  FakeClock clock_;
  std::unique_ptr<HttpApi> api_;
};

TEST_F(HttpApiTest, GetSendsPathAndHeaders) {
  state_.answers = {Ok(R"({"kind":"Pod","metadata":{"name":"p"}})")};
  auto pod = api().Get(resources::kPods, "a", "p");
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  EXPECT_EQ((*pod)["metadata"]["name"], "p");
  const Request& r = Sent();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path_and_query, "/api/v1/namespaces/a/pods/p");
  EXPECT_EQ(FindHeader(r.headers, "Accept"), "application/json");
  EXPECT_EQ(FindHeader(r.headers, "Authorization"), "Bearer tok");
  EXPECT_EQ(FindHeader(r.headers, "User-Agent"), "dljob-operator");
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.timeout, milliseconds(30'000));
}

TEST_F(HttpApiTest, ListSendsQuery) {
  state_.answers = {Ok(R"({"kind":"PodList","items":[]})")};
  ListOptions o;
  o.label_selector = "dljob.io/job-name=x";
  o.limit = 50;
  ASSERT_TRUE(api().List(resources::kDLJobs, "", o).ok());
  EXPECT_EQ(Sent().path_and_query,
            "/apis/dljob.io/v1alpha1/dljobs?labelSelector=dljob.io%2Fjob-name%3Dx&limit=50");
}

TEST_F(HttpApiTest, WritesSendBodiesWithTheirContentTypes) {
  for (int i = 0; i < 6; ++i) state_.answers.push_back(Ok("{}"));
  HttpApi& a = api();
  Json pod = {{"metadata", {{"name", "p"}, {"resourceVersion", "5"}}}};
  ASSERT_TRUE(a.Create(resources::kPods, "a", pod).ok());
  ASSERT_TRUE(a.Replace(resources::kPods, "a", pod).ok());
  ASSERT_TRUE(a.ReplaceStatus(resources::kDLJobs, "a", pod).ok());
  ASSERT_TRUE(a.MergePatch(resources::kDLJobs, "a", "j", {{"status", {{"phase", "Running"}}}},
                           "status").ok());
  ASSERT_TRUE(a.Delete(resources::kPods, "a", "p").ok());
  ASSERT_TRUE(a.Bind("a", "p", "node-1").ok());
  struct Want {
    const char* method;
    const char* path;
    const char* content_type;
    Json body;
  };
  const Want want[] = {
      {"POST", "/api/v1/namespaces/a/pods", "application/json", pod},
      {"PUT", "/api/v1/namespaces/a/pods/p", "application/json", pod},
      {"PUT", "/apis/dljob.io/v1alpha1/namespaces/a/dljobs/p/status", "application/json", pod},
      {"PATCH", "/apis/dljob.io/v1alpha1/namespaces/a/dljobs/j/status",
       "application/merge-patch+json", {{"status", {{"phase", "Running"}}}}},
      {"DELETE", "/api/v1/namespaces/a/pods/p", "application/json",
       {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}}},
      {"POST", "/api/v1/namespaces/a/pods/p/binding", "application/json",
       {{"apiVersion", "v1"}, {"kind", "Binding"},
        {"metadata", {{"name", "p"}, {"namespace", "a"}}},
        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "node-1"}}}}},
  };
  ASSERT_EQ(state_.requests.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const Request& r = Sent(i);
    EXPECT_EQ(r.method, want[i].method) << i;
    EXPECT_EQ(r.path_and_query, want[i].path) << i;
    EXPECT_EQ(FindHeader(r.headers, "Content-Type"), want[i].content_type) << i;
    EXPECT_EQ(Json::parse(r.body), want[i].body) << i;
  }
}

TEST_F(HttpApiTest, ReplaceWithoutANameIsRefusedLocally) {
  auto r = api().Replace(resources::kPods, "a", Json{{"metadata", Json::object()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 400);
  EXPECT_TRUE(state_.requests.empty());
}

TEST_F(HttpApiTest, RetriesGetOn503And429WithBackoffAndRetryAfter) {
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"), Fail(kReasonTimeout),
                    StatusAnswer(429, "TooManyRequests", {{"Retry-After", "3"}}), Ok(R"({"ok":1})")};
  auto r = api().Get(resources::kPods, "a", "p");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(state_.requests.size(), 4u);
  std::vector<Clock::Duration> want = {milliseconds(100), milliseconds(200), seconds(3)};
  EXPECT_EQ(clock_.sleeps(), want);
}

TEST_F(HttpApiTest, GivesUpAfterMaxAttempts) {
  ApiOptions o = Options();
  o.retry.max_attempts = 3;
  for (int i = 0; i < 3; ++i) state_.answers.push_back(StatusAnswer(500, "InternalError"));
  auto r = api(o).List(resources::kPods, "a", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 500);
  EXPECT_EQ(r.error().message, "m500");
  EXPECT_EQ(state_.requests.size(), 3u);
  EXPECT_EQ(clock_.sleeps().size(), 2u);
}

TEST_F(HttpApiTest, PostIsNotRetriedAfterA500OrAReset) {
  state_.answers = {StatusAnswer(500, "InternalError")};
  auto r = api().Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 500);
  EXPECT_EQ(state_.requests.size(), 1u);
  state_.answers = {Fail(kReasonTransportError)};
  r = api().Bind("a", "p", "n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, kReasonTransportError);
  EXPECT_EQ(state_.requests.size(), 2u);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(HttpApiTest, PostIsRetriedWhenItNeverReachedTheServer) {
  state_.answers = {Fail(kReasonConnectFailed), StatusAnswer(429, "TooManyRequests"), Ok("{}")};
  auto r = api().Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(state_.requests.size(), 3u);
  EXPECT_EQ(Sent(2).body, Sent(0).body);
}

TEST_F(HttpApiTest, ConflictsAndNotFoundSurfaceWithoutRetry) {
  state_.answers = {StatusAnswer(409, "Conflict"), StatusAnswer(409, "AlreadyExists"), StatusAnswer(404, "NotFound")};
  HttpApi& a = api();
  auto conflict = a.Replace(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(conflict.error().IsConflict());
  auto exists = a.Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_FALSE(exists.ok());
  EXPECT_TRUE(exists.error().IsAlreadyExists());
  auto missing = a.Get(resources::kPods, "a", "q");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().IsNotFound());
  EXPECT_EQ(state_.requests.size(), 3u);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(HttpApiTest, NonJsonAnswerIsAnError) {
  state_.answers = {Ok("<html>")};
  auto r = api().Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "BadResponse");
  EXPECT_NE(r.error().message.find("<html>"), std::string::npos);
}

TEST_F(HttpApiTest, AsksForTheTokenOnEveryAttempt) {
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"), Ok("{}")};
  api_ = std::make_unique<HttpApi>(std::make_unique<FakeTransport>(state_),
                                   std::make_unique<RotatingTokens>(), Options(), clock_);
  ASSERT_TRUE(api_->Get(resources::kNodes, "", "n").ok());
  EXPECT_EQ(FindHeader(Sent(0).headers, "Authorization"), "Bearer tok1");
  EXPECT_EQ(FindHeader(Sent(1).headers, "Authorization"), "Bearer tok2");
  EXPECT_EQ(Sent(1).path_and_query, "/api/v1/nodes/n");
}

TEST_F(HttpApiTest, RateLimiterPacesCalls) {
  ApiOptions o = Options();
  o.qps = 2;
  o.burst = 1;
  for (int i = 0; i < 3; ++i) state_.answers.push_back(Ok("{}"));
  HttpApi& a = api(o);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(a.Get(resources::kPods, "a", "p").ok());
  std::vector<Clock::Duration> want = {milliseconds(500), milliseconds(500)};
  EXPECT_EQ(clock_.sleeps(), want);
}

const std::string kAdded = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}})";
const std::string kBookmark = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";

TEST_F(HttpApiTest, WatchDecodesEventsAcrossChunks) {
  std::string all = kAdded + "\n" + kBookmark + "\n";
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"),
                    Stream({all.substr(0, 10), all.substr(10, 70), all.substr(80)})};
  ListOptions o;
  o.resource_version = "1";
  auto w = api().Watch(resources::kPods, "a", o);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  EXPECT_EQ(state_.requests.size(), 2u);  // the 503 was retried
  const Request& r = Sent(1);
  EXPECT_EQ(r.path_and_query, "/api/v1/namespaces/a/pods?watch=true&resourceVersion=1"
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
  state_.answers = {Stream({})};
  ListOptions o;
  o.timeout_seconds = 20;
  o.allow_bookmarks = false;
  ASSERT_TRUE(api().Watch(resources::kNodes, "", o).ok());
  EXPECT_EQ(Sent().path_and_query, "/api/v1/nodes?watch=true&timeoutSeconds=20");
  EXPECT_EQ(Sent().timeout, seconds(50));
}

TEST_F(HttpApiTest, Watch410EitherWayIsGone) {
  Json expired = {{"type", "ERROR"},
                  {"object", {{"kind", "Status"}, {"status", "Failure"}, {"reason", "Expired"},
                              {"message", "too old resource version: 1 (5)"}, {"code", 410}}}};
  state_.answers = {Stream({kAdded + "\n", expired.dump() + "\n"}), StatusAnswer(410, "Expired")};
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
  state_.answers = {Stream({internal.dump(), "\nnot json"})};
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
  state_.answers = {Stream({kAdded.substr(0, 20)})};
  auto w = api().Watch(resources::kPods, "a", {});
  ASSERT_TRUE(w.ok());
  auto e = (*w)->Next();
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("middle of an event"), std::string::npos);
}

TEST_F(HttpApiTest, FollowedLogsArriveLineByLine) {
  state_.answers = {Stream({"step 1\nst", "ep 2\n", "\n", "last"})};
  LogOptions o;
  o.container = "launcher";
  o.follow = true;
  auto lines = api().Logs("a", "p", o);
  ASSERT_TRUE(lines.ok()) << lines.error().ToString();
  EXPECT_EQ(Sent().path_and_query, "/api/v1/namespaces/a/pods/p/log?container=launcher&follow=true");
  EXPECT_EQ(FindHeader(Sent().headers, "Accept"), "*/*");
  EXPECT_EQ(Sent().timeout, seconds(600));
  std::vector<std::string> got;
  while (true) {
    auto line = (*lines)->Next();
    ASSERT_TRUE(line.ok());
    if (!*line) break;
    got.push_back(**line);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"step 1", "step 2", "", "last"}));
}

TEST_F(HttpApiTest, LogsOfAMissingPodIsNotFound) {
  state_.answers = {StatusAnswer(404, "NotFound")};
  auto lines = api().Logs("a", "p", {});
  ASSERT_FALSE(lines.ok());
  EXPECT_TRUE(lines.error().IsNotFound());
}

TEST(MakeApi, ReportsBadConfig) {
  Config config;
  config.source = "kubeconfig /k";
  config.server = "ftp://x";
  auto api = MakeApi(config);
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find("kubeconfig /k"), std::string::npos);
  config.server = "http://127.0.0.1:1";
  EXPECT_TRUE(MakeApi(config).ok());
}

}  // namespace
}  // namespace dljob::kube
