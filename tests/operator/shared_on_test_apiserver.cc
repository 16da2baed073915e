// The shared operator cases (shared_fixture.h) against dljob-test-apiserver: one node of 8 GPUs,
// as scripts/cluster/kube-up.sh's real cluster has (two, labelled alike, for SharedMultiNodeTest),
// with the simulated kubelet moving bound pods to Running and finishing graceful deletions, and
// launcher log lines reaching the operator 200 ms after they are written, as through a real node's
// log pipeline (a line can arrive after its pod is seen finished).
#include "tests/operator/shared_fixture.h"
#include "tests/operator/test_cluster.h"

namespace dljob::testing {
namespace {

Result<std::unique_ptr<E2eCluster>> StartTestApiServer() {
  Result<std::unique_ptr<TestCluster>> c = TestCluster::Start(
      {.nodes = 1, .gpus_per_node = 8, .kubelet_delay_ms = 0, .log_delay_ms = 200});
  if (!c.ok()) return c.status();
  return std::unique_ptr<E2eCluster>(std::move(*c));
}

// Two nodes labelled as kube-up.sh --nodes 2 labels its two: an NVLink clique each, one rack, one
// zone.
Result<std::unique_ptr<E2eCluster>> StartTwoNodes() {
  Result<std::unique_ptr<TestCluster>> c = TestCluster::Start(
      {.nodes = 2, .gpus_per_node = 8, .kubelet_delay_ms = 0, .log_delay_ms = 200});
  if (!c.ok()) return c.status();
  for (int i = 0; i < 2; ++i) {
    Json labels = {{"nvidia.com/gpu.clique", "clique-" + std::to_string(i)},
                   {"dljob.io/rack", "rack-0"},
                   {"topology.kubernetes.io/zone", "zone-a"}};
    kube::ApiResult<Json> labelled =
        (*c)->api().MergePatch(kube::resources::kNodes, "", "gpu-node-" + std::to_string(i),
                               {{"metadata", {{"labels", labels}}}});
    if (!labelled.ok()) return labelled.error().ToStatus().WithContext("labelling the nodes");
  }
  return std::unique_ptr<E2eCluster>(std::move(*c));
}

INSTANTIATE_TEST_SUITE_P(Shared, SharedE2eTest,
                         ::testing::Values(ClusterKind{"TestApiServer", StartTestApiServer}),
                         ClusterKindName);
INSTANTIATE_TEST_SUITE_P(SharedMultiNode, SharedMultiNodeTest,
                         ::testing::Values(ClusterKind{"TestApiServer", StartTwoNodes}),
                         ClusterKindName);

}  // namespace
}  // namespace dljob::testing
