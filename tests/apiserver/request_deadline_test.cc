// The test API server as kube-apiserver's request-deadline filter: the `timeout` parameter parsed
// as a Go duration, a request whose time runs out during an injected latency answered 504 and not
// applied, latencies aimed at one client, and the log of the writes that were applied.
#include "tests/apiserver/request_deadline.h"

#include <gtest/gtest.h>

#include "tests/apiserver/fake_writer.h"
#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/write_log.h"

namespace dljob::apiserver {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(ParseGoDuration, ReadsWhatTimeParseDurationReads) {
  const std::pair<const char*, std::optional<nanoseconds>> cases[] = {
      {"2500ms", milliseconds(2500)},
      {"1.5s", milliseconds(1500)},
      {"1m30s", seconds(90)},
      {"1h", std::chrono::hours(1)},
      {"300us", std::chrono::microseconds(300)},
      {"300\xC2\xB5s", std::chrono::microseconds(300)},
      {"7ns", nanoseconds(7)},
      {".5s", milliseconds(500)},
      {"0", nanoseconds(0)},
      {"-1s", seconds(-1)},
      {"+2s", seconds(2)},
      {"", std::nullopt},
      {"5", std::nullopt},  // a number needs a unit, except a lone 0
      {"ms", std::nullopt},
      {"1x", std::nullopt},
      {"1.5.3s", std::nullopt},
      {"1s ", std::nullopt},
  };
  for (const auto& [text, want] : cases) EXPECT_EQ(ParseGoDuration(text), want) << text;
}

TEST(RequestTimeout, OnlyForRequestsThatAreNotLongRunning) {
  const char kPod[] = "/api/v1/namespaces/a/pods/p";
  EXPECT_EQ(*RequestTimeout(kPod, ParseQuery("timeout=250ms")), milliseconds(250));
  EXPECT_EQ(*RequestTimeout(kPod, ParseQuery("")), std::nullopt);
  EXPECT_EQ(*RequestTimeout(kPod, ParseQuery("timeout=0s")), std::nullopt);  // no limit
  EXPECT_EQ(*RequestTimeout("/api/v1/pods", ParseQuery("watch=true&timeout=1s")), std::nullopt);
  EXPECT_EQ(*RequestTimeout("/api/v1/namespaces/a/pods/p/log", ParseQuery("timeout=1s")),
            std::nullopt);
  ApiResult<std::optional<nanoseconds>> bad = RequestTimeout(kPod, ParseQuery("timeout=soon"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().http, 400);
  EXPECT_NE(bad.error().message.find("invalid timeout specified in the request URL"),
            std::string::npos);
}

class SlowClientTest : public ::testing::Test {
 protected:
  FakeWriter Call(const std::string& method, const std::string& target, const std::string& agent,
                  const Json& body = nullptr) {
    FakeWriter out;
    handler_.Serve(
        RequestFor(method, target, body.is_null() ? "" : body.dump(), {{"User-Agent", agent}}),
        out);
    return out;
  }
  static Json ConfigMap(const std::string& name) {
    return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}};
  }

  RestHandler handler_;
};

const char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

// One client is slow: its write, whose time runs out while it waits, is answered 504 when the
// time is up (not when the latency would end) and never applied; the other client's writes go
// through and are logged, in order, with who sent them.
TEST_F(SlowClientTest, AWriteWhoseTimeRunsOutWhileDelayedIsNotApplied) {
  FakeWriter set = Call("POST", "/_test/latency", "test",
                        {{"milliseconds", 20'000}, {"userAgent", "replica-a"}});
  ASSERT_EQ(set.status_, 200) << set.body_;
  EXPECT_EQ(Call("POST", kConfigMaps, "replica-b", ConfigMap("b1")).status_, 201);

  const auto start = std::chrono::steady_clock::now();
  FakeWriter late =
      Call("POST", std::string(kConfigMaps) + "?timeout=200ms", "replica-a", ConfigMap("a1"));
  EXPECT_EQ(late.status_, 504) << late.body_;
  EXPECT_EQ(late.json()["reason"], "Timeout");
  // A failure limit well short of the 20 s latency, not a timing check.
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  EXPECT_EQ(Call("GET", std::string(kConfigMaps) + "/a1", "replica-b").status_, 404);

  Json changed = ConfigMap("b1");
  changed["data"] = {{"k", "v"}};
  EXPECT_EQ(Call("PUT", std::string(kConfigMaps) + "/b1", "replica-b", changed).status_, 200);
  EXPECT_EQ(Call("POST", kConfigMaps, "replica-b", ConfigMap("b1")).status_, 409);  // not applied
  EXPECT_EQ(Call("DELETE", std::string(kConfigMaps) + "/b1", "replica-b").status_, 200);
  EXPECT_EQ(Call("POST", std::string(kConfigMaps) + "?timeout=later", "replica-b").status_, 400);

  FakeWriter log = Call("GET", "/_test/writes", "test");
  ASSERT_EQ(log.status_, 200);
  Json writes = log.json()["writes"];
  ASSERT_EQ(writes.size(), 3u) << writes.dump(1);
  const char* want[][2] = {{"POST", "/api/v1/namespaces/default/configmaps"},
                           {"PUT", "/api/v1/namespaces/default/configmaps/b1"},
                           {"DELETE", "/api/v1/namespaces/default/configmaps/b1"}};
  int64_t last_rv = 0;
  for (size_t i = 0; i < writes.size(); ++i) {
    EXPECT_EQ(writes[i]["seq"], i + 1);
    EXPECT_EQ(writes[i]["userAgent"], "replica-b");
    EXPECT_EQ(writes[i]["method"], want[i][0]);
    EXPECT_EQ(writes[i]["target"], want[i][1]);
    EXPECT_EQ(writes[i]["appliedAt"].get<std::string>().size(), 27u);  // ...:07.123456Z
    int64_t rv = std::stoll(writes[i]["resourceVersion"].get<std::string>());
    EXPECT_GT(rv, last_rv);
    last_rv = rv;
  }
  EXPECT_EQ(writes[0]["code"], 201);
  EXPECT_EQ(log.json()["dropped"], 0);

  EXPECT_EQ(Call("DELETE", "/_test/writes", "test").status_, 200);
  EXPECT_TRUE(Call("GET", "/_test/writes", "test").json()["writes"].empty());
}

// The write log reads the answer's metadata.resourceVersion without building the object: only
// that field counts, not one nested deeper, in another object, or after metadata.
TEST(ResourceVersionOfBody, ReadsOnlyTheTopLevelMetadataField) {
  EXPECT_EQ(ResourceVersionOfBody(R"({"apiVersion":"v1","involvedObject":{"resourceVersion":"3"},)"
                                  R"("metadata":{"annotations":{"resourceVersion":"4"},)"
                                  R"("finalizers":["resourceVersion"],"name":"e",)"
                                  R"("resourceVersion":"17"},"spec":{"x":[1,2]}})"),
            "17");
  EXPECT_EQ(ResourceVersionOfBody(R"({"metadata":{"resourceVersion":"5"},"spec":{)"), "5");
  EXPECT_EQ(ResourceVersionOfBody(R"({"metadata":{"name":"a"},"resourceVersion":"9"})"), "");
  EXPECT_EQ(ResourceVersionOfBody(R"({"kind":"Status","code":201})"), "");
  EXPECT_EQ(ResourceVersionOfBody("not json"), "");
  EXPECT_EQ(ResourceVersionOfBody(""), "");
}

TEST_F(SlowClientTest, LatencyRulesMatchByClientMethodAndPathAndAreRemovedWithZero) {
  Faults& f = handler_.faults();
  f.SetLatency({.latency = milliseconds(50), .user_agent = "", .method = "", .path_prefix = ""});
  f.SetLatency({.latency = milliseconds(700),
                .user_agent = "replica-a",
                .method = "PUT",
                .path_prefix = "/apis/coordination.k8s.io"});
  EXPECT_EQ(f.LatencyFor("PUT", "/apis/coordination.k8s.io/v1/leases", "replica-a"),
            milliseconds(700));
  EXPECT_EQ(f.LatencyFor("GET", "/apis/coordination.k8s.io/v1/leases", "replica-a"),
            milliseconds(50));
  EXPECT_EQ(f.LatencyFor("PUT", "/apis/coordination.k8s.io/v1/leases", "replica-b"),
            milliseconds(50));
  f.SetLatency({.latency = milliseconds(0),
                .user_agent = "replica-a",
                .method = "PUT",
                .path_prefix = "/apis/coordination.k8s.io"});
  EXPECT_EQ(f.LatencyFor("PUT", "/apis/coordination.k8s.io/v1/leases", "replica-a"),
            milliseconds(50));
  f.Clear();
  EXPECT_EQ(f.LatencyFor("PUT", "/api/v1/pods", "x"), milliseconds(0));
}

}  // namespace
}  // namespace dljob::apiserver
