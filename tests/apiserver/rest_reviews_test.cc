#include "tests/apiserver/rest_reviews.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "tests/apiserver/fake_writer.h"
#include "tests/apiserver/rest_handler.h"

namespace dljob::apiserver {
namespace {

constexpr char kRbac[] = "/apis/rbac.authorization.k8s.io/v1";

class RestReviewsTest : public ::testing::Test {
 protected:
  Json Post(const std::string& target, const Json& body, int want) {
    FakeWriter out;
    handler_.Serve(RequestFor("POST", target, body.dump(), {}), out);
    EXPECT_EQ(out.status_, want) << target << ": " << out.body_;
    return out.body_.empty() ? Json() : out.json();
  }
  // A service account's legacy token Secret holding `token`.
  void ServiceAccountToken(const std::string& ns, const std::string& sa, const std::string& token) {
    Post(
        "/api/v1/namespaces/" + ns + "/secrets",
        {{"apiVersion", "v1"},
         {"kind", "Secret"},
         {"type", "kubernetes.io/service-account-token"},
         {"metadata",
          {{"name", sa + "-token"}, {"annotations", {{"kubernetes.io/service-account.name", sa}}}}},
         {"data", {{"token", Base64Encode(token)}}}},
        201);
  }
  Json TokenReview(const std::string& token) {
    return Post("/apis/authentication.k8s.io/v1/tokenreviews",
                {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", token}}}},
                201)["status"];
  }
  Json CanGetLogs(const Json& user, const std::string& ns) {
    Json spec = {
        {"user", user["username"]},
        {"groups", user.value("groups", Json::array())},
        {"resourceAttributes",
         {{"namespace", ns}, {"verb", "get"}, {"resource", "pods"}, {"subresource", "log"}}}};
    return Post("/apis/authorization.k8s.io/v1/subjectaccessreviews",
                {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SubjectAccessReview"},
                 {"spec", spec}},
                201)["status"];
  }
  static RestOptions WithTeamA() {
    RestOptions o;
    o.namespaces.push_back("team-a");
    return o;
  }
  RestHandler handler_{WithTeamA()};
};

TEST_F(RestReviewsTest, ATokenIsAServiceAccountsWhenItsTokenSecretHoldsIt) {
  ServiceAccountToken("team-a", "alice", "tok-alice");
  Json ok = TokenReview("tok-alice");
  EXPECT_TRUE(ok["authenticated"]);
  EXPECT_EQ(ok["user"]["username"], "system:serviceaccount:team-a:alice");
  EXPECT_EQ(ok["user"]["groups"], Json({"system:serviceaccounts", "system:serviceaccounts:team-a",
                                        "system:authenticated"}));
  EXPECT_FALSE(TokenReview("tok-mallory")["authenticated"]);
  EXPECT_FALSE(TokenReview("")["authenticated"]);
}

TEST_F(RestReviewsTest, RbacDecidesWhoMayGetPodLogsInANamespace) {
  Post(std::string(kRbac) + "/namespaces/team-a/roles", Json::parse(R"({
         "metadata": {"name": "log-reader"},
         "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"]}]})"),
       201);
  Post(std::string(kRbac) + "/namespaces/team-a/rolebindings", Json::parse(R"({
         "metadata": {"name": "alice-reads"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "log-reader"},
         "subjects": [{"kind": "ServiceAccount", "name": "alice"}]})"),
       201);
  // A ClusterRole with only pods (not pods/log), bound cluster-wide to bob.
  Post(std::string(kRbac) + "/clusterroles", Json::parse(R"({
         "metadata": {"name": "pod-viewer"},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})"),
       201);
  Post(std::string(kRbac) + "/clusterrolebindings", Json::parse(R"({
         "metadata": {"name": "bob-views"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "pod-viewer"},
         "subjects": [{"kind": "User", "name": "bob"}]})"),
       201);
  Json alice = {{"username", "system:serviceaccount:team-a:alice"},
                {"groups", {"system:serviceaccounts", "system:authenticated"}}};
  Json allowed = CanGetLogs(alice, "team-a");
  EXPECT_TRUE(allowed["allowed"]);
  EXPECT_EQ(allowed["reason"],
            "RBAC: allowed by RoleBinding \"alice-reads/team-a\" of Role \"log-reader\" to "
            "ServiceAccount \"alice\"");
  EXPECT_FALSE(CanGetLogs(alice, "team-b")["allowed"]);  // the binding is team-a's only
  EXPECT_FALSE(CanGetLogs({{"username", "bob"}}, "team-a")["allowed"]);  // pods, not pods/log
  EXPECT_TRUE(CanGetLogs({{"username", "root"}, {"groups", {"system:masters"}}}, "x")["allowed"]);
}

TEST(ReviewAccess, RulesMatchByVerbGroupResourceWildcardsAndNames) {
  auto rule = [](Json verbs, Json resources, Json names = Json::array()) {
    return Json{
        {"apiGroups", {""}}, {"resources", resources}, {"verbs", verbs}, {"resourceNames", names}};
  };
  auto allows = [](const Json& r, const std::string& name) {
    RbacObjects rbac;
    rbac.cluster_roles = {{{"metadata", {{"name", "r"}}}, {"rules", {r}}}};
    rbac.cluster_role_bindings = {{{"metadata", {{"name", "b"}}},
                                   {"roleRef", {{"kind", "ClusterRole"}, {"name", "r"}}},
                                   {"subjects", {{{"kind", "Group"}, {"name", "devs"}}}}}};
    Json spec = {{"user", "u"},
                 {"groups", {"devs"}},
                 {"resourceAttributes",
                  {{"namespace", "n"},
                   {"verb", "get"},
                   {"resource", "pods"},
                   {"subresource", "log"},
                   {"name", name}}}};
    return ReviewAccess(spec, rbac)["allowed"].get<bool>();
  };
  EXPECT_TRUE(allows(rule({"get"}, {"pods/log"}), "p"));
  EXPECT_TRUE(allows(rule({"*"}, {"*"}), "p"));
  EXPECT_TRUE(allows(rule({"get"}, {"*/log"}), "p"));
  EXPECT_TRUE(allows(rule({"get"}, {"pods/log"}, {"p"}), "p"));
  EXPECT_FALSE(allows(rule({"get"}, {"pods/log"}, {"q"}), "p"));
  EXPECT_FALSE(allows(rule({"list"}, {"pods/log"}), "p"));
  EXPECT_FALSE(allows(rule({"get"}, {"pods"}), "p"));
  EXPECT_FALSE(allows(rule({"get"}, {"pods/exec"}), "p"));
}

}  // namespace
}  // namespace dljob::apiserver
