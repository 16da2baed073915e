#include "operator/app/log_access.h"

#include <gtest/gtest.h>

#include "base/testing/fake_clock.h"

namespace dljob::op {
namespace {

using kube::Json;

// An API server that answers TokenReviews from a token table and SubjectAccessReviews from a
// list of "user namespace" pairs allowed to get pods/log, and counts what it was asked.
class ReviewingApi final : public kube::Api {
 public:
  std::map<std::string, Json> users;  // token -> TokenReview status.user
  std::set<std::string> allowed;      // "user ns"
  bool down = false;
  int token_reviews = 0, access_reviews = 0;
  Json last_access_spec;

  kube::ApiResult<Json> Create(const kube::Resource& r, const std::string&,
                               const Json& object) override {
    if (down) return kube::ApiError{503, "ServiceUnavailable", "apiserver down"};
    Json out = object;
    if (r.plural == "tokenreviews") {
      ++token_reviews;
      auto it = users.find(object["spec"]["token"]);
      out["status"] = it == users.end() ? Json{{"authenticated", false}, {"error", "invalid"}}
                                        : Json{{"authenticated", true}, {"user", it->second}};
      return out;
    }
    ++access_reviews;
    last_access_spec = object["spec"];
    const std::string key = object["spec"]["user"].get<std::string>() + " " +
                            object["spec"]["resourceAttributes"]["namespace"].get<std::string>();
    out["status"] = {{"allowed", allowed.count(key) > 0}};
    return out;
  }
  kube::ApiResult<Json> Get(const kube::Resource&, const std::string&,
                            const std::string&) override {
    return Unused();
  }
  kube::ApiResult<Json> List(const kube::Resource&, const std::string&,
                             const kube::ListOptions&) override {
    return Unused();
  }
  kube::ApiResult<Json> Replace(const kube::Resource&, const std::string&, const Json&) override {
    return Unused();
  }
  kube::ApiResult<Json> ReplaceStatus(const kube::Resource&, const std::string&,
                                      const Json&) override {
    return Unused();
  }
  kube::ApiResult<Json> MergePatch(const kube::Resource&, const std::string&, const std::string&,
                                   const Json&, const std::string&) override {
    return Unused();
  }
  kube::ApiResult<Json> Delete(const kube::Resource&, const std::string&, const std::string&,
                               const kube::DeleteOptions&) override {
    return Unused();
  }
  kube::ApiResult<kube::WatchStreamPtr> Watch(const kube::Resource&, const std::string&,
                                              const kube::ListOptions&) override {
    return Unused();
  }
  kube::ApiResult<Json> Bind(const std::string&, const std::string&, const std::string&) override {
    return Unused();
  }
  kube::ApiResult<kube::LineStreamPtr> Logs(const std::string&, const std::string&,
                                            const kube::LogOptions&) override {
    return Unused();
  }

 private:
  static kube::ApiError Unused() {
    return kube::ApiError{500, "Internal", "not used by LogAccess"};
  }
};

class LogAccessTest : public ::testing::Test {
 protected:
  LogAccessTest() {
    api_.users["tok-alice"] = {{"username", "alice"}, {"groups", {"devs", "system:authenticated"}}};
    api_.users["tok-bob"] = {{"username", "bob"}};
    api_.allowed = {"alice team-a"};
  }
  ReviewingApi api_;
  dljob::testing::FakeClock clock_;
  LogAccess access_{api_, clock_, std::chrono::seconds(30)};
};

TEST_F(LogAccessTest, NoTokenOrABadOneIs401NotAllowedIs403AllowedIs200) {
  EXPECT_EQ(access_.Check("", "team-a").status, 401);
  EXPECT_EQ(api_.token_reviews, 0);  // nothing to review
  AccessDecision bad = access_.Check("tok-mallory", "team-a");
  EXPECT_EQ(bad.status, 401);
  EXPECT_EQ(api_.access_reviews, 0);
  AccessDecision bob = access_.Check("tok-bob", "team-a");
  EXPECT_EQ(bob.status, 403);
  EXPECT_EQ(bob.message,
            "Forbidden: User \"bob\" cannot get resource \"pods/log\" in namespace \"team-a\"");
  EXPECT_EQ(access_.Check("tok-alice", "team-b").status, 403);
  AccessDecision alice = access_.Check("tok-alice", "team-a");
  EXPECT_EQ(alice.status, 200);
  EXPECT_EQ(alice.user, "alice");
  // The review asks for exactly what `kubectl logs` needs, for the reviewed user and groups.
  EXPECT_EQ(api_.last_access_spec, (Json{{"user", "alice"},
                                         {"groups", {"devs", "system:authenticated"}},
                                         {"resourceAttributes",
                                          {{"namespace", "team-a"},
                                           {"verb", "get"},
                                           {"resource", "pods"},
                                           {"subresource", "log"}}}}));
}

TEST_F(LogAccessTest, DecisionsAreCachedForTheirTtlPerTokenAndNamespace) {
  ASSERT_EQ(access_.Check("tok-alice", "team-a").status, 200);
  ASSERT_EQ(access_.Check("tok-bob", "team-a").status, 403);
  const int reviews = api_.token_reviews;
  api_.allowed = {"bob team-a"};  // RBAC changes: seen once the cached decisions expire
  EXPECT_EQ(access_.Check("tok-alice", "team-a").status, 200);
  EXPECT_EQ(access_.Check("tok-bob", "team-a").status, 403);
  EXPECT_EQ(api_.token_reviews, reviews);
  EXPECT_EQ(access_.Check("tok-alice", "team-b").status, 403);  // another namespace: asked
  EXPECT_EQ(api_.token_reviews, reviews + 1);
  clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(access_.Check("tok-alice", "team-a").status, 403);
  EXPECT_EQ(access_.Check("tok-bob", "team-a").status, 200);
}

TEST_F(LogAccessTest, AnUnreachableApiServerIs503AndNotCached) {
  api_.down = true;
  AccessDecision d = access_.Check("tok-alice", "team-a");
  EXPECT_EQ(d.status, 503);
  EXPECT_NE(d.message.find("TokenReview"), std::string::npos) << d.message;
  api_.down = false;
  EXPECT_EQ(access_.Check("tok-alice", "team-a").status, 200);
}

TEST(BearerTokenTest, TakesTheTokenOfABearerCredentialOnly) {
  EXPECT_EQ(BearerToken("Bearer abc.def"), "abc.def");
  EXPECT_EQ(BearerToken("bearer  abc "), "abc");
  EXPECT_EQ(BearerToken("Basic dXNlcjpwdw=="), "");
  EXPECT_EQ(BearerToken("Bearer "), "");
  EXPECT_EQ(BearerToken(""), "");
}

}  // namespace
}  // namespace dljob::op
