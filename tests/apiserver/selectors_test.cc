#include "tests/apiserver/selectors.h"

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

using nlohmann::json;

bool LabelsMatch(const std::string& selector, const json& labels) {
  Result<LabelSelector> s = LabelSelector::Parse(selector);
  EXPECT_TRUE(s.ok()) << selector << ": " << s.status().message();
  return s.ok() && s->Matches(labels);
}

TEST(LabelSelector, EqualityForms) {
  json labels = {{"app", "web"}, {"tier", "front"}};
  EXPECT_TRUE(LabelsMatch("app=web", labels));
  EXPECT_TRUE(LabelsMatch("app==web", labels));
  EXPECT_TRUE(LabelsMatch("app = web , tier=front", labels));
  EXPECT_FALSE(LabelsMatch("app=db", labels));
  EXPECT_FALSE(LabelsMatch("app=web,tier=back", labels));
  EXPECT_TRUE(LabelsMatch("app!=db", labels));
  EXPECT_FALSE(LabelsMatch("app!=web", labels));
  EXPECT_TRUE(LabelsMatch("missing!=x", labels));  // absent key: != holds
  EXPECT_FALSE(LabelsMatch("missing=x", labels));
}

TEST(LabelSelector, SetAndExistence) {
  json labels = {{"dljob.io/role", "worker"}, {"env", ""}};
  EXPECT_TRUE(LabelsMatch("dljob.io/role in (launcher, worker)", labels));
  EXPECT_FALSE(LabelsMatch("dljob.io/role in (launcher)", labels));
  EXPECT_TRUE(LabelsMatch("dljob.io/role notin (launcher)", labels));
  EXPECT_FALSE(LabelsMatch("dljob.io/role notin (launcher,worker)", labels));
  EXPECT_TRUE(LabelsMatch("absent notin (a)", labels));
  EXPECT_TRUE(LabelsMatch("env", labels));
  EXPECT_FALSE(LabelsMatch("!env", labels));
  EXPECT_TRUE(LabelsMatch("!absent,dljob.io/role in (worker),env", labels));
  EXPECT_FALSE(LabelsMatch("absent", json(nullptr)));
  EXPECT_TRUE(LabelsMatch("", json(nullptr)));
}

TEST(LabelSelector, RejectsMalformed) {
  EXPECT_FALSE(LabelSelector::Parse("a in b").ok());
  EXPECT_FALSE(LabelSelector::Parse("a within (b)").ok());
  EXPECT_FALSE(LabelSelector::Parse("a in ()").ok());
  EXPECT_FALSE(LabelSelector::Parse("a=b,,c").ok());
  EXPECT_FALSE(LabelSelector::Parse("=b").ok());
  EXPECT_FALSE(LabelSelector::Parse("a b=c").ok());
}

TEST(FieldSelector, MatchesDottedPaths) {
  json pod = {{"metadata", {{"name", "w-0"}, {"namespace", "team-a"}}},
              {"spec", {{"nodeName", "gpu-1"}}},
              {"status", {{"phase", "Running"}}}};
  auto matches = [&](const std::string& s) {
    Result<FieldSelector> f = FieldSelector::Parse(s);
    EXPECT_TRUE(f.ok()) << s;
    return f.ok() && f->Matches(pod);
  };
  EXPECT_TRUE(matches("metadata.name=w-0"));
  EXPECT_TRUE(matches("metadata.namespace==team-a,status.phase=Running"));
  EXPECT_FALSE(matches("spec.nodeName="));  // unbound pods only
  EXPECT_TRUE(matches("spec.nodeName!="));
  EXPECT_FALSE(matches("status.phase!=Running"));
  EXPECT_TRUE(matches("spec.missing="));
  EXPECT_FALSE(FieldSelector::Parse("metadata.name").ok());
}

}  // namespace
}  // namespace dljob::apiserver
