// See node_loss.h.
#include "operator/controller/node_loss.h"

#include "base/json_fields.h"
#include "kube/object_fields.h"
#include "operator/controller/children.h"
#include "scheduler/kube_objects.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;

std::optional<NodeLoss> LossOf(const std::string& name, const kube::Store& nodes,
                               kube::Duration grace) {
  std::optional<Json> node = nodes.Get(name);
  if (!node) return std::nullopt;
  std::optional<WallTime> since = NotReadySince(*node);
  if (!since) return std::nullopt;
  const Json& ready = *scheduler::NodeReadyCondition(*node);
  std::string why = StringAt(ready, "status");
  for (const char* field : {"reason", "message"}) {
    if (std::string text = StringAt(ready, field); !text.empty())
      why += (why.empty() ? "" : ", ") + text;
  }
  return NodeLoss{
      name, *since + grace,
      "node " + name + " has not been Ready since " + FormatRfc3339(*since) + " (" + why + ")"};
}

}  // namespace

std::optional<WallTime> NotReadySince(const Json& node) {
  const Json* ready = scheduler::NodeReadyCondition(node);
  if (!ready || StringAt(*ready, "status") == "True") return std::nullopt;
  return ParseRfc3339(StringAt(*ready, "lastTransitionTime"));
}

std::optional<NodeLoss> FindNodeLoss(const std::vector<Json>& pods, const kube::Store& nodes,
                                     kube::Duration grace) {
  std::optional<NodeLoss> first;
  for (const Json& pod : pods) {
    const std::string node = kube::NodeNameOf(pod);
    if (node.empty() || IsDeleting(pod)) continue;
    std::optional<NodeLoss> loss = LossOf(node, nodes, grace);
    if (loss && (!first || loss->due < first->due)) first = std::move(loss);
  }
  return first;
}

std::optional<std::string> CordonedNodeUnder(const std::vector<Json>& pods,
                                             const kube::Store& nodes) {
  for (const Json& pod : pods) {
    const std::string name = kube::NodeNameOf(pod);
    if (name.empty() || IsDeleting(pod)) continue;
    std::optional<Json> node = nodes.Get(name);
    if (node && scheduler::NodeCordoned(*node)) return name;
  }
  return std::nullopt;
}

bool OnLostNode(const Json& pod, const kube::Store& nodes, kube::Duration grace, WallTime now) {
  const std::string node = kube::NodeNameOf(pod);
  if (node.empty()) return false;
  std::optional<NodeLoss> loss = LossOf(node, nodes, grace);
  return loss && loss->due <= now;
}

}  // namespace dljob::controller
