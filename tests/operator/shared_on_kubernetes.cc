// The shared operator cases (shared_fixture.h) against the real Kubernetes of
// scripts/cluster/kube-up.sh (kube_cluster.h). The suite installs the DLJob and DLQueue CRDs when
// they are missing and removes them at its end if it did; each case has its own namespace and
// operator.
#include <iostream>

#include "tests/operator/kube_cluster.h"
#include "tests/operator/shared_fixture.h"

namespace dljob::testing {
namespace {

class Crds : public ::testing::Environment {
 public:
  void SetUp() override {
    Status s = KubeCluster::EnsureCrds(&installed_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  void TearDown() override {
    if (!installed_) return;
    Status s = KubeCluster::DeleteCrds();
    EXPECT_TRUE(s.ok()) << s.message();
  }

 private:
  bool installed_ = false;
};

[[maybe_unused]] ::testing::Environment* const kCrds =
    ::testing::AddGlobalTestEnvironment(new Crds());

Result<std::unique_ptr<E2eCluster>> StartKubernetes() {
  Result<std::unique_ptr<KubeCluster>> c = KubeCluster::Start();
  if (!c.ok()) return c.status();
  return std::unique_ptr<E2eCluster>(std::move(*c));
}

INSTANTIATE_TEST_SUITE_P(Shared, SharedE2eTest,
                         ::testing::Values(ClusterKind{"Kubernetes", StartKubernetes}),
                         ClusterKindName);
// Not yet here: KubeCluster needs one node, and its single-node cases are not pinned to one of
// several (shared_fixture.h).
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SharedMultiNodeTest);

}  // namespace
}  // namespace dljob::testing
