#include "operator/controller/gang_binding.h"

#include <map>

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
constexpr char kGpu[] = "nvidia.com/gpu";

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A whole-GPU quantity: 8 or "8" (GPUs are never fractional).
int64_t Gpus(const Json& resources) {
  auto it = resources.find(kGpu);
  if (it == resources.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (!it->is_string()) return 0;
  try {
    return std::stoll(it->get<std::string>());
  } catch (const std::exception&) {
    return 0;
  }
}

int64_t PodGpus(const Json& pod) {
  int64_t total = 0;
  for (const Json& c : pod.value("spec", Json::object()).value("containers", Json::array())) {
    const Json res = c.value("resources", Json::object());
    int64_t limit = Gpus(res.value("limits", Json::object()));
    total += limit > 0 ? limit : Gpus(res.value("requests", Json::object()));
  }
  return total;
}

bool IsLive(const Json& pod) {
  std::string phase = Str(pod.value("status", Json::object()), "phase");
  return phase != "Succeeded" && phase != "Failed";
}

bool NodeReady(const Json& node) {
  const Json conditions = node.value("status", Json::object()).value("conditions", Json::array());
  for (const Json& c : conditions) {
    if (Str(c, "type") == "Ready") return Str(c, "status") == "True";
  }
  return conditions.empty();  // a node that reports nothing yet is taken at its word
}

}  // namespace

std::vector<scheduler::NodeState> NodeStates(const Json& nodes, const Json& pods) {
  std::map<std::string, int64_t> used;
  for (const Json& pod : pods.value("items", Json::array())) {
    std::string node = Str(pod.value("spec", Json::object()), "nodeName");
    if (!node.empty() && IsLive(pod)) used[node] += PodGpus(pod);
  }
  std::vector<scheduler::NodeState> out;
  for (const Json& node : nodes.value("items", Json::array())) {
    const Json meta = node.value("metadata", Json::object());
    scheduler::NodeState s;
    s.name = Str(meta, "name");
    s.allocatable_gpus = Gpus(node.value("status", Json::object()).value("allocatable", Json::object()));
    s.used_gpus = used[s.name];
    const Json labels = meta.value("labels", Json::object());
    for (const auto& [k, v] : labels.items()) {
      if (v.is_string()) s.labels[k] = v.get<std::string>();
    }
    const Json spec = node.value("spec", Json::object());
    for (const Json& t : spec.value("taints", Json::array())) {
      s.taints.push_back({Str(t, "key"), Str(t, "value"), Str(t, "effect")});
    }
    s.schedulable = !spec.value("unschedulable", false) && NodeReady(node);
    out.push_back(std::move(s));
  }
  return out;
}

Result<GangOutcome> BindGang(kube::Api& api, const DLJob& job, std::vector<Json>& workers) {
  std::vector<Json*> unbound;
  for (Json& w : workers) {
    if (Str(w.value("spec", Json::object()), "nodeName").empty()) unbound.push_back(&w);
  }
  if (unbound.empty()) return GangOutcome{true, ""};
  kube::ApiResult<Json> nodes = kube::ListAll(api, kube::resources::kNodes, "");
  if (!nodes.ok()) return nodes.error().ToStatus().WithContext("listing nodes");
  kube::ApiResult<Json> pods = kube::ListAll(api, kube::resources::kPods, "");
  if (!pods.ok()) return pods.error().ToStatus().WithContext("listing pods");

  // The fresh list knows bindings the cache may not have seen yet.
  std::map<std::string, std::string> bound_now;
  for (const Json& pod : (*pods)["items"]) {
    const Json meta = pod.value("metadata", Json::object());
    if (Str(meta, "namespace") != job.metadata.namespace_) continue;
    std::string node = Str(pod.value("spec", Json::object()), "nodeName");
    if (!node.empty()) bound_now[Str(meta, "name")] = node;
  }
  std::vector<Json*> todo;
  for (Json* w : unbound) {
    auto it = bound_now.find(Str((*w)["metadata"], "name"));
    if (it != bound_now.end()) {
      (*w)["spec"]["nodeName"] = it->second;
    } else {
      todo.push_back(w);
    }
  }
  if (todo.empty()) return GangOutcome{true, ""};

  DLJob rest = job;  // place only what is left (all of it, unless an earlier bind was cut short)
  rest.spec.gpus = static_cast<int64_t>(todo.size()) * job.spec.gpus_per_worker.value_or(1);
  Result<scheduler::GangPlacement> placement = scheduler::PlaceGang(rest, NodeStates(*nodes, *pods));
  if (!placement.ok()) return GangOutcome{false, placement.status().message()};
  for (size_t i = 0; i < todo.size(); ++i) {
    const std::string& node = placement->worker_nodes[i];
    std::string name = Str((*todo[i])["metadata"], "name");
    kube::ApiResult<Json> bound = api.Bind(job.metadata.namespace_, name, node);
    if (!bound.ok() && !bound.error().IsConflict()) {
      return bound.error().ToStatus().WithContext("binding pod " + job.metadata.namespace_ + "/" +
                                                  name + " to node " + node);
    }
    (*todo[i])["spec"]["nodeName"] = node;
  }
  return GangOutcome{true, ""};
}

}  // namespace dljob::controller
