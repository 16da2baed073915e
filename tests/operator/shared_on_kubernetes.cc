// The shared operator cases (shared_fixture.h) against the real Kubernetes of
// scripts/cluster/kube-up.sh (kube_cluster.h), started with --nodes 2 or more: the single-node
// cases use one of its nodes, the multi-node ones two. The suite installs the DLJob and DLQueue
// CRDs when they are missing and removes them at its end if it did; each case has its own namespace
// and operator.
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

Result<std::unique_ptr<E2eCluster>> StartOn(int nodes) {
  Result<std::unique_ptr<KubeCluster>> c = KubeCluster::Start(nodes);
  if (!c.ok()) return c.status();
  return std::unique_ptr<E2eCluster>(std::move(*c));
}

INSTANTIATE_TEST_SUITE_P(Shared, SharedE2eTest,
                         ::testing::Values(ClusterKind{"Kubernetes", [] { return StartOn(1); }}),
                         ClusterKindName);
// These need scripts/cluster/kube-up.sh --nodes 2 (or more): on one node they fail, saying so.
INSTANTIATE_TEST_SUITE_P(SharedMultiNode, SharedMultiNodeTest,
                         ::testing::Values(ClusterKind{"Kubernetes", [] { return StartOn(2); }}),
                         ClusterKindName);

}  // namespace
}  // namespace dljob::testing
