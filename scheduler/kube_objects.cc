#include "scheduler/kube_objects.h"

#include <algorithm>
#include <string>

#include "base/json_fields.h"
#include "jobs/quantity.h"

namespace dljob::scheduler {
namespace {

using Json = nlohmann::json;

constexpr int64_t kMilliPerMib = int64_t{1000} << 20;

// A quantity in thousandths of its unit: "500m", "8", "64Gi", or a JSON number; 0 when neither.
int64_t Milli(const Json& v) {
  if (v.is_number_integer()) return v.get<int64_t>() * 1000;
  if (v.is_number()) return static_cast<int64_t>(v.get<double>() * 1000);
  if (!v.is_string()) return 0;
  Result<int64_t> milli = QuantityMilli(v.get<std::string>());
  return milli.ok() ? *milli : 0;
}

// A resource list (requests, limits, allocatable, overhead) in the scheduler's units, rounding
// up (what a pod takes) or down (what a node has).
Resources ResourcesOf(const Json& list, bool round_up) {
  auto div = [round_up](int64_t milli, int64_t unit) {
    return round_up ? (milli + unit - 1) / unit : milli / unit;
  };
  return {div(Milli(FieldOf(list, "nvidia.com/gpu")), 1000), Milli(FieldOf(list, "cpu")),
          div(Milli(FieldOf(list, "memory")), kMilliPerMib),
          div(Milli(FieldOf(list, "pods")), 1000)};
}

// A container's requests, each left out defaulting to its limit (as the API server defaults them).
Resources ContainerRequests(const Json& container) {
  const Json& res = FieldOf(container, "resources");
  const Json& requests = FieldOf(res, "requests");
  const Json& limits = FieldOf(res, "limits");
  Json merged = limits.is_object() ? limits : Json::object();
  if (requests.is_object()) {
    for (const auto& [k, v] : requests.items()) merged[k] = v;
  }
  return ResourcesOf(merged, /*round_up=*/true);
}

void Add(Resources& to, const Resources& r) {
  to.gpus += r.gpus;
  to.cpu_milli += r.cpu_milli;
  to.memory_mib += r.memory_mib;
}

void Max(Resources& to, const Resources& r) {
  to.gpus = std::max(to.gpus, r.gpus);
  to.cpu_milli = std::max(to.cpu_milli, r.cpu_milli);
  to.memory_mib = std::max(to.memory_mib, r.memory_mib);
}

}  // namespace

bool NodeCordoned(const Json& node) {
  const Json& cordoned = FieldOf(FieldOf(node, "spec"), "unschedulable");
  return cordoned.is_boolean() && cordoned.get<bool>();
}

const Json* NodeReadyCondition(const Json& node) {
  const Json& conditions = FieldOf(FieldOf(node, "status"), "conditions");
  if (!conditions.is_array()) return nullptr;
  for (const Json& c : conditions) {
    if (StringAt(c, "type") == "Ready") return &c;
  }
  return nullptr;
}

bool NodeReady(const Json& node) {
  if (const Json* ready = NodeReadyCondition(node)) return StringAt(*ready, "status") == "True";
  // A node that reports nothing yet is taken at its word.
  const Json& conditions = FieldOf(FieldOf(node, "status"), "conditions");
  return !conditions.is_array() || conditions.empty();
}

Node SchedulerNodeOf(const Json& node) {
  const Json& meta = FieldOf(node, "metadata");
  Node n;
  n.name = StringAt(meta, "name");
  n.allocatable = ResourcesOf(FieldOf(FieldOf(node, "status"), "allocatable"), /*round_up=*/false);
  const Json& labels = FieldOf(meta, "labels");
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (v.is_string()) n.labels[k] = v.get<std::string>();
    }
  }
  const Json& taints = FieldOf(FieldOf(node, "spec"), "taints");
  if (taints.is_array()) {
    for (const Json& t : taints)
      n.taints.push_back({StringAt(t, "key"), StringAt(t, "value"), StringAt(t, "effect")});
  }
  n.schedulable = !NodeCordoned(node) && NodeReady(node);
  return n;
}

Resources PodRequests(const Json& pod) {
  const Json& spec = FieldOf(pod, "spec");
  Resources total;
  if (const Json& cs = FieldOf(spec, "containers"); cs.is_array()) {
    for (const Json& c : cs) Add(total, ContainerRequests(c));
  }
  if (const Json& init = FieldOf(spec, "initContainers"); init.is_array()) {
    for (const Json& c : init) Max(total, ContainerRequests(c));  // they run one at a time
  }
  Add(total, ResourcesOf(FieldOf(spec, "overhead"), /*round_up=*/true));
  total.pods = 1;
  return total;
}

}  // namespace dljob::scheduler
