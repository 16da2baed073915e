#include "kube/http_api.h"

#include <gtest/gtest.h>

#include "kube/testing/http_api_fixture.h"

namespace dljob::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::ChunkedAnswer;
using testing::FailedAnswer;
using testing::HttpApiTest;
using testing::OkAnswer;
using testing::RefreshingTokens;
using testing::RotatingTokens;
using testing::StatusAnswer;

TEST_F(HttpApiTest, GetSendsPathAndHeaders) {
  state_.answers = {OkAnswer(R"({"kind":"Pod","metadata":{"name":"p"}})")};
  auto pod = api().Get(resources::kPods, "a", "p");
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  EXPECT_EQ((*pod)["metadata"]["name"], "p");
  const http::ClientRequest& r = Sent();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/api/v1/namespaces/a/pods/p");
  EXPECT_EQ(http::HeaderValue(r.headers, "Accept"), "application/json");
  EXPECT_EQ(http::HeaderValue(r.headers, "Authorization"), "Bearer tok");
  EXPECT_EQ(http::HeaderValue(r.headers, "User-Agent"), "dljob-operator");
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.timeout, milliseconds(30'000));
}

TEST_F(HttpApiTest, ServiceProxyGetPassesTheBearerTokenOnInTheNamedHeader) {
  state_.answers = {OkAnswer("[rank 0] hello\n")};
  ApiResult<std::string> body =
      api().ServiceProxyGet("ops", "metrics:8080", "/logs/a/b", "X-Dljob-Authorization");
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  EXPECT_EQ(*body, "[rank 0] hello\n");
  const http::ClientRequest& r = Sent();
  EXPECT_EQ(r.target, "/api/v1/namespaces/ops/services/metrics:8080/proxy/logs/a/b");
  EXPECT_EQ(http::HeaderValue(r.headers, "Authorization"), "Bearer tok");
  EXPECT_EQ(http::HeaderValue(r.headers, "X-Dljob-Authorization"), "Bearer tok");

  // The Service's own refusal comes back as the error, its text as the message.
  http::testing::FakeAnswer refused = OkAnswer("Forbidden: User \"bob\" cannot get resource\n");
  refused.status = 403;  // plain text, as the operator answers
  state_.answers = {refused};
  body = api().ServiceProxyGet("ops", "metrics", "/logs/a/b", "X-Dljob-Authorization");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.error().http, 403);
  EXPECT_NE(body.error().message.find("User \"bob\""), std::string::npos);

  // A client certificate (no token): nothing to pass on, nothing sent.
  const size_t sent = state_.requests.size();
  body = api(std::make_unique<StaticTokenSource>(""))
             .ServiceProxyGet("ops", "metrics", "/logs/a/b", "X-Dljob-Authorization");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.error().reason, kReasonNoToken);
  EXPECT_EQ(state_.requests.size(), sent);
}

TEST_F(HttpApiTest, ListSendsQuery) {
  state_.answers = {OkAnswer(R"({"kind":"PodList","items":[]})")};
  ListOptions o;
  o.label_selector = "dljob.io/job-name=x";
  o.limit = 50;
  ASSERT_TRUE(api().List(resources::kDLJobs, "", o).ok());
  EXPECT_EQ(Sent().target,
            "/apis/dljob.io/v1alpha1/dljobs?labelSelector=dljob.io%2Fjob-name%3Dx&limit=50");
}

// An informer's relist of 50,000 pods keeps each page only until its items are taken.
TEST_F(HttpApiTest, ListEachFollowsThePagesAndHandsOverTheirItemsAsTheyArrive) {
  state_.answers = {
      OkAnswer(R"({"kind":"PodList","metadata":{"resourceVersion":"7","continue":"c1"},)"
               R"("items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})"),
      OkAnswer(R"({"kind":"PodList","metadata":{"resourceVersion":"9"},)"
               R"("items":[{"metadata":{"name":"c"}}]})")};
  ListOptions o;
  o.limit = 2;
  std::vector<std::pair<std::string, size_t>> taken;  // name, pages asked for by then
  ApiResult<std::string> version = ListEach(api(), resources::kPods, "", o, [&](Json&& item) {
    taken.emplace_back(item["metadata"]["name"], state_.requests.size());
  });
  ASSERT_TRUE(version.ok()) << version.error().ToString();
  EXPECT_EQ(*version, "7");  // the first page's: where a watch goes on from
  EXPECT_EQ(taken, (std::vector<std::pair<std::string, size_t>>{{"a", 1}, {"b", 1}, {"c", 2}}));
  EXPECT_EQ(Sent(1).target, "/api/v1/pods?limit=2&continue=c1");

  state_.answers = {OkAnswer(R"({"metadata":{"resourceVersion":"3","continue":"c"},)"
                             R"("items":[{"metadata":{"name":"a"}}]})"),
                    OkAnswer(R"({"metadata":{"resourceVersion":"4"},"items":[]})")};
  ApiResult<Json> all = ListAll(api(), resources::kPods, "", o);
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  EXPECT_EQ((*all)["kind"], "PodList");
  EXPECT_EQ((*all)["apiVersion"], "v1");
  EXPECT_EQ((*all)["metadata"], Json({{"resourceVersion", "3"}}));
  EXPECT_EQ((*all)["items"].size(), 1u);
}

TEST_F(HttpApiTest, WritesSendBodiesWithTheirContentTypes) {
  for (int i = 0; i < 6; ++i) state_.answers.push_back(OkAnswer("{}"));
  HttpApi& a = api();
  Json pod = {{"metadata", {{"name", "p"}, {"resourceVersion", "5"}}}};
  ASSERT_TRUE(a.Create(resources::kPods, "a", pod).ok());
  ASSERT_TRUE(a.Replace(resources::kPods, "a", pod).ok());
  ASSERT_TRUE(a.ReplaceStatus(resources::kDLJobs, "a", pod).ok());
  ASSERT_TRUE(
      a.MergePatch(resources::kDLJobs, "a", "j", {{"status", {{"phase", "Running"}}}}, "status")
          .ok());
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
      {"PATCH",
       "/apis/dljob.io/v1alpha1/namespaces/a/dljobs/j/status",
       "application/merge-patch+json",
       {{"status", {{"phase", "Running"}}}}},
      {"DELETE",
       "/api/v1/namespaces/a/pods/p",
       "application/json",
       {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}}},
      {"POST",
       "/api/v1/namespaces/a/pods/p/binding",
       "application/json",
       {{"apiVersion", "v1"},
        {"kind", "Binding"},
        {"metadata", {{"name", "p"}, {"namespace", "a"}}},
        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "node-1"}}}}},
  };
  ASSERT_EQ(state_.requests.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const http::ClientRequest& r = Sent(i);
    EXPECT_EQ(r.method, want[i].method) << i;
    EXPECT_EQ(r.target, want[i].path) << i;
    EXPECT_EQ(http::HeaderValue(r.headers, "Content-Type"), want[i].content_type) << i;
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
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"), FailedAnswer(http::Failure::kTimeout),
                    StatusAnswer(429, "TooManyRequests", {{"Retry-After", "3"}}),
                    OkAnswer(R"({"ok":1})")};
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
  state_.answers = {FailedAnswer(http::Failure::kTransportError)};
  r = api().Bind("a", "p", "n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, kReasonTransportError);
  EXPECT_EQ(state_.requests.size(), 2u);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(HttpApiTest, PostIsRetriedWhenItNeverReachedTheServer) {
  state_.answers = {FailedAnswer(http::Failure::kConnectFailed),
                    StatusAnswer(429, "TooManyRequests"), OkAnswer("{}")};
  auto r = api().Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(state_.requests.size(), 3u);
  EXPECT_EQ(Sent(2).body, Sent(0).body);
}

TEST_F(HttpApiTest, ConflictsAndNotFoundSurfaceWithoutRetry) {
  state_.answers = {StatusAnswer(409, "Conflict"), StatusAnswer(409, "AlreadyExists"),
                    StatusAnswer(404, "NotFound")};
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
  state_.answers = {OkAnswer("<html>")};
  auto r = api().Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "BadResponse");
  EXPECT_NE(r.error().message.find("<html>"), std::string::npos);
}

TEST_F(HttpApiTest, AsksForTheTokenOnEveryAttempt) {
  state_.answers = {StatusAnswer(503, "ServiceUnavailable"), OkAnswer("{}")};
  api_ = std::make_unique<HttpApi>(std::make_unique<http::testing::FakeClient>(state_),
                                   std::make_unique<RotatingTokens>(), Options(), clock_);
  ASSERT_TRUE(api_->Get(resources::kNodes, "", "n").ok());
  EXPECT_EQ(http::HeaderValue(Sent(0).headers, "Authorization"), "Bearer tok1");
  EXPECT_EQ(http::HeaderValue(Sent(1).headers, "Authorization"), "Bearer tok2");
  EXPECT_EQ(Sent(1).target, "/api/v1/nodes/n");
}

TEST_F(HttpApiTest, A401IsTriedOnceMoreWithAFreshToken) {
  state_.answers = {StatusAnswer(401, "Unauthorized"), OkAnswer(R"({"ok":1})")};
  auto tokens = std::make_unique<RefreshingTokens>();
  RefreshingTokens& t = *tokens;
  auto r = api(std::move(tokens)).Get(resources::kPods, "a", "p");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(state_.requests.size(), 2u);
  EXPECT_EQ(http::HeaderValue(Sent(0).headers, "Authorization"), "Bearer gen1");
  EXPECT_EQ(http::HeaderValue(Sent(1).headers, "Authorization"), "Bearer gen2");
  EXPECT_EQ(t.invalidated, std::vector<std::string>{"gen1"});
  EXPECT_TRUE(clock_.sleeps().empty());  // at once: not a backoff
}

TEST_F(HttpApiTest, A401WithNoFresherTokenIsTheAnswer) {
  state_.answers = {StatusAnswer(401, "Unauthorized")};
  auto r = api().Get(resources::kPods, "a", "p");  // a static token: nothing to refresh
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 401);
  EXPECT_EQ(state_.requests.size(), 1u);

  state_.answers = {StatusAnswer(401, "Unauthorized"), StatusAnswer(401, "Unauthorized")};
  auto tokens = std::make_unique<RefreshingTokens>();
  RefreshingTokens& t = *tokens;
  r = api(std::move(tokens)).Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 401);  // the fresh token was refused too: once is enough
  EXPECT_EQ(state_.requests.size(), 3u);
  EXPECT_EQ(t.invalidated, std::vector<std::string>{"gen1"});
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(HttpApiTest, CreatesWatchesAndRetriedCallsAreReauthorizedToo) {
  state_.answers = {StatusAnswer(401, "Unauthorized"),
                    OkAnswer("{}"),
                    StatusAnswer(401, "Unauthorized"),
                    ChunkedAnswer({R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                                   "\n"}),
                    StatusAnswer(503, "ServiceUnavailable"),
                    StatusAnswer(401, "Unauthorized"),
                    OkAnswer("{}")};
  HttpApi& a = api(std::make_unique<RefreshingTokens>());
  ASSERT_TRUE(a.Create(resources::kPods, "a", {{"metadata", {{"name", "p"}}}}).ok());
  EXPECT_EQ(Sent(1).method, "POST");  // the server refused before acting: safe to send again
  EXPECT_EQ(http::HeaderValue(Sent(1).headers, "Authorization"), "Bearer gen2");
  auto watch = a.Watch(resources::kPods, "a", {});
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  EXPECT_EQ(http::HeaderValue(Sent(3).headers, "Authorization"), "Bearer gen3");
  ApiOptions o = Options();
  o.retry.max_attempts = 2;  // the 503 is the one retry; the fresh-token try is extra
  ASSERT_TRUE(api(std::make_unique<RefreshingTokens>(), o).Get(resources::kPods, "a", "p").ok());
  EXPECT_EQ(state_.requests.size(), 7u);
  EXPECT_EQ(clock_.sleeps(), std::vector<Clock::Duration>{milliseconds(100)});
}

TEST_F(HttpApiTest, NoCredentialsMeansNothingIsSent) {
  auto tokens = std::make_unique<RefreshingTokens>();
  tokens->failure = "/k: users[u].user.exec: the credential plugin \"p\" exited with status 1";
  HttpApi& a = api(std::move(tokens));
  auto r = a.Get(resources::kPods, "a", "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http, 0);
  EXPECT_EQ(r.error().reason, kReasonNoCredentials);
  EXPECT_EQ(r.error().ToString(),
            "/k: users[u].user.exec: the credential plugin \"p\" exited with status 1");
  EXPECT_FALSE(a.Watch(resources::kPods, "a", {}).ok());
  EXPECT_TRUE(state_.requests.empty());
  EXPECT_TRUE(clock_.sleeps().empty());  // not retried: the plugin has just said no
}

TEST_F(HttpApiTest, RateLimiterPacesCalls) {
  ApiOptions o = Options();
  o.qps = 2;
  o.burst = 1;
  for (int i = 0; i < 3; ++i) state_.answers.push_back(OkAnswer("{}"));
  HttpApi& a = api(o);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(a.Get(resources::kPods, "a", "p").ok());
  std::vector<Clock::Duration> want = {milliseconds(500), milliseconds(500)};
  EXPECT_EQ(clock_.sleeps(), want);
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
