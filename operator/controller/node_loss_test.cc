#include "operator/controller/node_loss.h"

#include <gtest/gtest.h>

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

Json Node(const std::string& name, const std::string& ready, const std::string& since) {
  Json condition = {{"type", "Ready"}, {"status", ready}, {"reason", "KubeletNotReady"}};
  if (!since.empty()) condition["lastTransitionTime"] = since;
  return {{"metadata", {{"name", name}}}, {"status", {{"conditions", {condition}}}}};
}

Json Pod(const std::string& name, const std::string& node, bool deleting = false) {
  Json pod = {{"metadata", {{"name", name}}}, {"spec", Json::object()}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  if (deleting) pod["metadata"]["deletionTimestamp"] = "2026-01-02T03:00:00Z";
  return pod;
}

WallTime At(const std::string& rfc3339) { return *ParseRfc3339(rfc3339); }

TEST(NodeLoss, NotReadySinceIsTheReadyConditionsLastTransition) {
  EXPECT_EQ(NotReadySince(Node("n", "False", "2026-01-02T03:04:05Z")), At("2026-01-02T03:04:05Z"));
  EXPECT_EQ(NotReadySince(Node("n", "Unknown", "2026-01-02T03:04:05Z")),
            At("2026-01-02T03:04:05Z"));
  EXPECT_FALSE(NotReadySince(Node("n", "True", "2026-01-02T03:04:05Z")).has_value());
  EXPECT_FALSE(NotReadySince(Node("n", "Unknown", "")).has_value());  // not judged without a time
  EXPECT_FALSE(NotReadySince(Json{{"metadata", {{"name", "n"}}}}).has_value());
}

TEST(NodeLoss, TheFirstNodeDueUnderLivePodsIsFoundAndLostOnlyOnceDue) {
  kube::Store nodes;
  nodes.Upsert(Node("a", "Unknown", "2026-01-02T03:05:00Z"));
  nodes.Upsert(Node("b", "False", "2026-01-02T03:04:00Z"));
  nodes.Upsert(Node("c", "True", "2026-01-02T03:00:00Z"));
  const kube::Duration grace = std::chrono::seconds(30);
  std::optional<NodeLoss> loss =
      FindNodeLoss({Pod("p0", "a"), Pod("p1", "b"), Pod("p2", "c"), Pod("p3", "")}, nodes, grace);
  ASSERT_TRUE(loss.has_value());
  EXPECT_EQ(loss->node, "b");
  EXPECT_EQ(loss->due, At("2026-01-02T03:04:30Z"));
  EXPECT_EQ(loss->message,
            "node b has not been Ready since 2026-01-02T03:04:00Z (False, KubeletNotReady)");
  // A pod already being deleted, or on a node the informer does not hold, does not count.
  EXPECT_EQ(FindNodeLoss({Pod("p1", "b", true), Pod("p0", "a")}, nodes, grace)->node, "a");
  EXPECT_FALSE(FindNodeLoss({Pod("p2", "c"), Pod("p4", "gone")}, nodes, grace).has_value());

  EXPECT_FALSE(OnLostNode(Pod("p1", "b"), nodes, grace, At("2026-01-02T03:04:29Z")));
  EXPECT_TRUE(OnLostNode(Pod("p1", "b", true), nodes, grace, At("2026-01-02T03:04:30Z")));
  EXPECT_FALSE(OnLostNode(Pod("p2", "c"), nodes, grace, At("2026-01-02T04:00:00Z")));
  EXPECT_FALSE(OnLostNode(Pod("p3", ""), nodes, grace, At("2026-01-02T04:00:00Z")));
}

TEST(NodeLoss, TheFirstCordonedNodeUnderLivePodsIsFound) {
  kube::Store nodes;
  Json cordoned = Node("c", "True", "2026-01-02T03:00:00Z");
  cordoned["spec"]["unschedulable"] = true;
  nodes.Upsert(cordoned);
  nodes.Upsert(Node("r", "True", "2026-01-02T03:00:00Z"));
  EXPECT_EQ(CordonedNodeUnder({Pod("w0", "r"), Pod("w1", "c")}, nodes), "c");
  EXPECT_FALSE(CordonedNodeUnder({Pod("w0", "r"), Pod("w1", "")}, nodes).has_value());
  EXPECT_FALSE(CordonedNodeUnder({Pod("w0", "c", /*deleting=*/true)}, nodes).has_value());
  EXPECT_FALSE(CordonedNodeUnder({Pod("w0", "unknown")}, nodes).has_value());
}

}  // namespace
}  // namespace dljob::controller
