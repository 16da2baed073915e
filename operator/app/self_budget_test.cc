// EnsureSelfBudget and SelfBudget (self_budget.h) against FakeApi: the budget made at the version
// given, with the Deployment's selector, labels and ownership; nothing written when it is right;
// replaced when minAvailable changes; deleted, when this operator made it, once the Deployment has
// one replica (a user's own budget of that name is left alone); a lost race read again; and the
// flag's values checked.
#include "operator/app/self_budget.h"

#include <gtest/gtest.h>

#include "kube/testing/fake_api.h"

namespace dljob::op {
namespace {

using kube::Json;
using kube::testing::FakeApi;
using Strings = std::vector<std::string>;
namespace res = kube::resources;

const SelfBudgetOptions kOptions{"dljob-system", "dljob-operator", "1"};

Json Deployment(int replicas) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", "dljob-operator"},
            {"namespace", "dljob-system"},
            {"labels", {{"app.kubernetes.io/name", "dljob-operator"}}}}},
          {"spec",
           {{"replicas", replicas},
            {"selector",
             {{"matchLabels",
               {{"app.kubernetes.io/name", "dljob-operator"},
                {"app.kubernetes.io/instance", "dljob"}}}}}}}};
}

TEST(SelfBudget, TwoReplicasGetOneOwnedByTheirDeploymentAndNothingIsWrittenTwice) {
  FakeApi api;
  Json deployment = api.Put(res::kDeployments, Deployment(2));
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  EXPECT_EQ(api.CallStrings(),
            (Strings{"get deployments dljob-system/dljob-operator",
                     "get poddisruptionbudgets dljob-system/dljob-operator",
                     "create poddisruptionbudgets dljob-system/dljob-operator"}));
  std::optional<Json> pdb =
      api.Object(res::kPodDisruptionBudgets, "dljob-system", "dljob-operator");
  ASSERT_TRUE(pdb);
  EXPECT_EQ((*pdb)["apiVersion"], "policy/v1");
  EXPECT_EQ((*pdb)["spec"]["minAvailable"], 1);
  EXPECT_EQ((*pdb)["spec"]["selector"], deployment["spec"]["selector"]);
  EXPECT_EQ((*pdb)["metadata"]["labels"], deployment["metadata"]["labels"]);
  const Json& owner = (*pdb)["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Deployment");
  EXPECT_EQ(owner["uid"], deployment["metadata"]["uid"]);
  EXPECT_FALSE(owner.contains("blockOwnerDeletion"));  // would need the Deployment's finalizers

  api.ClearCalls();
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  EXPECT_EQ(api.CallStrings(), (Strings{"get deployments dljob-system/dljob-operator",
                                        "get poddisruptionbudgets dljob-system/dljob-operator"}));
}

TEST(SelfBudget, ThePolicyVersionIsTheOneGivenAndAPercentageStaysAString) {
  std::optional<Json> pdb = SelfBudget(Deployment(3), res::kPodDisruptionBudgetsV1beta1, "50%");
  ASSERT_TRUE(pdb);
  EXPECT_EQ((*pdb)["apiVersion"], "policy/v1beta1");
  EXPECT_EQ((*pdb)["kind"], "PodDisruptionBudget");
  EXPECT_EQ((*pdb)["spec"]["minAvailable"], "50%");
  EXPECT_FALSE(SelfBudget(Deployment(1), res::kPodDisruptionBudgets, "1"));
  Json unset = Deployment(2);
  unset["spec"].erase("replicas");  // the API server's default is 1
  EXPECT_FALSE(SelfBudget(unset, res::kPodDisruptionBudgets, "1"));
}

TEST(SelfBudget, ANewMinAvailableReplacesIt) {
  FakeApi api;
  api.Put(res::kDeployments, Deployment(3));
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  api.ClearCalls();
  ASSERT_TRUE(
      EnsureSelfBudget(api, {"dljob-system", "dljob-operator", "2"}, res::kPodDisruptionBudgets)
          .ok());
  EXPECT_EQ(api.CallStrings().back(), "update poddisruptionbudgets dljob-system/dljob-operator");
  EXPECT_EQ((*api.Object(res::kPodDisruptionBudgets, "dljob-system",
                         "dljob-operator"))["spec"]["minAvailable"],
            2);
}

TEST(SelfBudget, OneReplicaDeletesTheBudgetThisOperatorMadeButNotAUsersOwn) {
  FakeApi api;
  api.Put(res::kDeployments, Deployment(2));
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  api.Put(res::kDeployments, Deployment(1));  // scaled down (Put keeps the uid)
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  EXPECT_FALSE(api.Object(res::kPodDisruptionBudgets, "dljob-system", "dljob-operator"));

  Json own = *SelfBudget(Deployment(2), res::kPodDisruptionBudgets, "1");
  own["metadata"].erase("ownerReferences");
  api.Put(res::kPodDisruptionBudgets, own);
  api.ClearCalls();
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  EXPECT_TRUE(api.Object(res::kPodDisruptionBudgets, "dljob-system", "dljob-operator"));
  EXPECT_EQ(api.CallStrings().size(), 2u);  // two gets, no delete
}

TEST(SelfBudget, AReplicaThatLosesTheRaceToCreateItReadsAgain) {
  FakeApi api;
  api.Put(res::kDeployments, Deployment(2));
  api.FailNext("create", "poddisruptionbudgets",
               kube::ApiError{409, "AlreadyExists", "already exists"});
  ASSERT_TRUE(EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets).ok());
  EXPECT_EQ(api.CallStrings(),
            (Strings{"get deployments dljob-system/dljob-operator",
                     "get poddisruptionbudgets dljob-system/dljob-operator",
                     "create poddisruptionbudgets dljob-system/dljob-operator",
                     "get deployments dljob-system/dljob-operator",
                     "get poddisruptionbudgets dljob-system/dljob-operator",
                     "create poddisruptionbudgets dljob-system/dljob-operator"}));
}

TEST(SelfBudget, ErrorsNameTheObjectAndTheAnswer) {
  FakeApi api;
  Status s = EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reading Deployment dljob-system/dljob-operator"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("404"), std::string::npos) << s.message();

  api.Put(res::kDeployments, Deployment(2));
  api.FailNext("create", "poddisruptionbudgets", kube::ApiError{403, "Forbidden", "no"});
  s = EnsureSelfBudget(api, kOptions, res::kPodDisruptionBudgets);
  EXPECT_NE(s.message().find("writing PodDisruptionBudget dljob-system/dljob-operator"),
            std::string::npos)
      << s.message();
}

TEST(SelfBudget, MinAvailableIsACountOrAPercentage) {
  for (const char* ok : {"1", "3", "1%", "50%", "100%"}) EXPECT_EQ(MinAvailableError(ok), "") << ok;
  for (const char* bad : {"", "0", "0%", "101%", "-1", "one", "1.5", "%", "50%%", "9999999"}) {
    EXPECT_NE(MinAvailableError(bad), "") << bad;
  }
  EXPECT_EQ(MinAvailableError("two"),
            "'two' is neither a count of pods (1, 2, …) nor a percentage (50%)");
}

}  // namespace
}  // namespace dljob::op
