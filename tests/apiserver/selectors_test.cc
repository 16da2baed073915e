// Field selectors (label selectors are kube::LabelSelector, tested in kube/).
#include "tests/apiserver/selectors.h"

#include <gtest/gtest.h>

namespace dljob::apiserver {
namespace {

using nlohmann::json;

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
