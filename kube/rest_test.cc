#include "kube/rest.h"

#include <gtest/gtest.h>

namespace dljob::kube::rest {
namespace {

TEST(PercentEncode, KeepsUnreservedAndEncodesTheRest) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("a b/c?d=e&f"), "a%20b%2Fc%3Fd%3De%26f");
  EXPECT_EQ(PercentEncode("role in (worker,launcher)"), "role%20in%20%28worker%2Clauncher%29");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");  // UTF-8 bytes, upper-case hex
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(Paths, CoreAndGroupNamespacedAndCluster) {
  EXPECT_EQ(CollectionPath(resources::kPods, "team-a"), "/api/v1/namespaces/team-a/pods");
  EXPECT_EQ(CollectionPath(resources::kPods, ""), "/api/v1/pods");
  EXPECT_EQ(CollectionPath(resources::kDLJobs, "x"), "/apis/dljob.io/v1alpha1/namespaces/x/dljobs");
  EXPECT_EQ(CollectionPath(resources::kNodes, "ignored"), "/api/v1/nodes");
  EXPECT_EQ(ObjectPath(resources::kNodes, "", "node-1"), "/api/v1/nodes/node-1");
  EXPECT_EQ(ObjectPath(resources::kLeases, "kube-system", "dljob"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/dljob");
  EXPECT_EQ(ObjectPath(resources::kDLJobs, "a", "job", "status"),
            "/apis/dljob.io/v1alpha1/namespaces/a/dljobs/job/status");
  EXPECT_EQ(ObjectPath(resources::kPods, "a", "p", "binding"),
            "/api/v1/namespaces/a/pods/p/binding");
  EXPECT_EQ(ObjectPath(resources::kPods, "a b", "p/q"), "/api/v1/namespaces/a%20b/pods/p%2Fq");
}

TEST(Query, FirstGetsQuestionMarkRestAmpersand) {
  Query q;
  EXPECT_EQ(q.str(), "");
  q.Add("a", "1").AddIf(false, "b", "2").Add("c", "x y");
  EXPECT_EQ(q.str(), "?a=1&c=x%20y");
}

TEST(ListQuery, AllFieldsInOrder) {
  EXPECT_EQ(ListQuery({}), "");
  ListOptions o;
  o.label_selector = "app=x,tier in (a,b)";
  o.field_selector = "spec.nodeName=node-1";
  o.resource_version = "42";
  o.limit = 500;
  o.continue_token = "abc=";
  EXPECT_EQ(ListQuery(o),
            "?labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29&fieldSelector=spec.nodeName%3Dnode-1"
            "&resourceVersion=42&limit=500&continue=abc%3D");
}

TEST(WatchQuery, WatchTimeoutAndBookmarks) {
  ListOptions o;
  o.resource_version = "7";
  o.timeout_seconds = 999;  // replaced by the argument
  o.limit = 10;             // not a watch parameter
  EXPECT_EQ(WatchQuery(o, 290),
            "?watch=true&resourceVersion=7&timeoutSeconds=290&allowWatchBookmarks=true");
  o.allow_bookmarks = false;
  o.label_selector = "a=b";
  EXPECT_EQ(WatchQuery(o, 0), "?watch=true&labelSelector=a%3Db&resourceVersion=7");
}

TEST(LogQuery, Options) {
  EXPECT_EQ(LogQuery({}), "");
  LogOptions o;
  o.container = "launcher";
  o.follow = true;
  o.since_seconds = 60;
  o.tail_lines = 0;
  EXPECT_EQ(LogQuery(o), "?container=launcher&follow=true&sinceSeconds=60&tailLines=0");
  o.timestamps = true;
  EXPECT_EQ(LogQuery(o),
            "?container=launcher&follow=true&sinceSeconds=60&tailLines=0&timestamps=true");
}

TEST(Bodies, DeleteAndBinding) {
  DeleteOptions d;
  d.precondition_uid = "u-1";
  d.grace_period_seconds = 0;
  EXPECT_EQ(DeleteBody(d), Json::parse(R"({"apiVersion":"v1","kind":"DeleteOptions",
      "propagationPolicy":"Background","preconditions":{"uid":"u-1"},"gracePeriodSeconds":0})"));
  d = {};
  d.propagation_policy = "";
  EXPECT_EQ(DeleteBody(d), Json::parse(R"({"apiVersion":"v1","kind":"DeleteOptions"})"));
  EXPECT_EQ(BindingBody("a", "p", "n"), Json::parse(R"({"apiVersion":"v1","kind":"Binding",
      "metadata":{"name":"p","namespace":"a"},
      "target":{"apiVersion":"v1","kind":"Node","name":"n"}})"));
}

TEST(DecodeError, StatusBody) {
  ApiError e = DecodeError(409, R"({"kind":"Status","apiVersion":"v1","status":"Failure",
      "message":"pods \"p\" already exists","reason":"AlreadyExists",
      "details":{"name":"p","kind":"pods"},"code":409})");
  EXPECT_EQ(e.http, 409);
  EXPECT_EQ(e.reason, "AlreadyExists");
  EXPECT_EQ(e.message, "pods \"p\" already exists");
  EXPECT_TRUE(e.IsAlreadyExists());
  EXPECT_FALSE(e.IsConflict());
}

TEST(DecodeError, StatusWithoutReasonTakesTheCodesReason) {
  ApiError e = DecodeError(500, R"({"kind":"Status","message":"etcd is down"})");
  EXPECT_EQ(e.reason, "InternalError");
  EXPECT_EQ(e.message, "etcd is down");
}

TEST(DecodeError, NonStatusBodies) {
  ApiError e = DecodeError(404, "404 page not found\n");
  EXPECT_EQ(e.reason, "NotFound");
  EXPECT_EQ(e.message, "404 page not found\n");
  EXPECT_TRUE(e.IsNotFound());

  e = DecodeError(503, "");
  EXPECT_EQ(e.reason, "ServiceUnavailable");
  EXPECT_EQ(e.message, "the server answered 503 with no body");

  e = DecodeError(418, std::string(1000, 'x'));
  EXPECT_EQ(e.reason, "");
  EXPECT_EQ(e.message, std::string(256, 'x'));

  // JSON, but not a Status (or a Status with a non-string kind): the body is the message.
  e = DecodeError(400, R"({"kind":"Pod"})");
  EXPECT_EQ(e.reason, "BadRequest");
  EXPECT_EQ(e.message, R"({"kind":"Pod"})");
  e = DecodeError(400, R"({"kind":7,"reason":5})");
  EXPECT_EQ(e.reason, "BadRequest");
}

TEST(RetryAfter, HeaderThenBody) {
  EXPECT_EQ(RetryAfter("3", ""), std::chrono::seconds(3));
  EXPECT_EQ(RetryAfter(" 0 ", ""), std::chrono::seconds(0));
  std::string body = R"({"kind":"Status","code":429,"details":{"retryAfterSeconds":7}})";
  EXPECT_EQ(RetryAfter("", body), std::chrono::seconds(7));
  EXPECT_EQ(RetryAfter("2", body), std::chrono::seconds(2));  // the header wins
  // An HTTP-date or garbage header falls back to the body.
  EXPECT_EQ(RetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", body), std::chrono::seconds(7));
  EXPECT_EQ(RetryAfter("-1", ""), std::nullopt);
  EXPECT_EQ(RetryAfter("", "not json"), std::nullopt);
  EXPECT_EQ(RetryAfter("", R"({"details":{"retryAfterSeconds":"7"}})"), std::nullopt);
  EXPECT_EQ(RetryAfter("", R"({"details":{"retryAfterSeconds":-4}})"), std::nullopt);
}

TEST(ReasonForCode, KnownAndUnknown) {
  EXPECT_EQ(ReasonForCode(409), "Conflict");
  EXPECT_EQ(ReasonForCode(410), "Expired");
  EXPECT_EQ(ReasonForCode(422), "Invalid");
  EXPECT_EQ(ReasonForCode(429), "TooManyRequests");
  EXPECT_EQ(ReasonForCode(200), "");
}

}  // namespace
}  // namespace dljob::kube::rest
