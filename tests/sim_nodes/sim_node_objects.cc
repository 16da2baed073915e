// See sim_node_objects.h.
#include "tests/sim_nodes/sim_node_objects.h"

#include "kube/object_fields.h"
#include "tests/apiserver/sim_objects.h"

namespace dljob::sim_nodes {
namespace {

Json Uid(const Json& pod) { return {{"uid", kube::UidOf(pod)}}; }

// Status as the test API server's simulated kubelet writes it, with this node's addresses.
Json PodStatus(const Json& pod, const apiserver::PodState& state, const std::string& host_ip,
               const std::string& now) {
  Json copy = pod;
  apiserver::ApplyPodState(copy, state, now);
  Json status = std::move(copy["status"]);
  status["hostIP"] = host_ip;
  status["podIPs"] = Json::array({{{"ip", status.value("podIP", "")}}});
  return status;
}

std::string StatusString(const Json& pod, const char* field) {
  if (!pod.contains("status") || !pod["status"].is_object()) return "";
  return pod["status"].value(field, "");
}

// The first three octets of node n's /24.
std::string NodeNet(int n) {
  return "127." + std::to_string(64 + n / 256) + "." + std::to_string(n % 256);
}

}  // namespace

int NodeNumber(const NodeTable& table, int i) { return table.first_index + i; }

std::string NodeName(const NodeTable& table, int i) {
  return table.prefix + std::to_string(NodeNumber(table, i));
}

std::string NodeIp(int number) { return NodeNet(number) + ".1"; }

std::string PodIp(int number, unsigned slot) {
  return NodeNet(number) + "." + std::to_string(2 + slot % 253);
}

Json NodeObject(const NodeTable& table, int i, const std::string& now) {
  const int n = NodeNumber(table, i);
  apiserver::NodeSpec spec;
  spec.name = NodeName(table, i);
  spec.gpus = table.gpus;
  spec.cpu = table.cpu;
  spec.memory = table.memory;
  spec.gpu_product = table.gpu_product;
  spec.labels = {{"nvidia.com/gpu.clique",
                  "clique-" + std::to_string(n / std::max(1, table.nodes_per_clique))},
                 {"dljob.io/rack", "rack-" + std::to_string(n / std::max(1, table.nodes_per_rack))},
                 {"topology.kubernetes.io/zone", table.zone},
                 {kSimulatedLabel, "true"}};
  Json node = apiserver::SimulatedNode(spec, now);
  Json& status = node["status"];
  for (const char* side : {"capacity", "allocatable"}) {
    status[side]["pods"] = std::to_string(table.max_pods);
  }
  status["conditions"] = NodeHeartbeatPatch(now, now)["status"]["conditions"];
  const bool endpoint = table.kubelet_port > 0;
  status["addresses"] = Json::array(
      {{{"type", "InternalIP"}, {"address", endpoint ? table.kubelet_address : NodeIp(n)}},
       {{"type", "Hostname"}, {"address", spec.name}}});
  status["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", endpoint ? table.kubelet_port : 0}}}};
  status["nodeInfo"]["kubeletVersion"] = "v1.20.2-dljob-sim";
  status["nodeInfo"]["containerRuntimeVersion"] = "sim://0";
  const std::string cidr = NodeNet(n) + ".0/24";
  node["spec"]["podCIDR"] = cidr;
  node["spec"]["podCIDRs"] = Json::array({cidr});
  return node;
}

Json NodeHeartbeatPatch(const std::string& since, const std::string& now) {
  auto condition = [&](const char* type, bool ok, const char* reason, const char* message) {
    return Json{
        {"type", type},       {"status", ok ? "True" : "False"}, {"reason", reason},
        {"message", message}, {"lastHeartbeatTime", now},        {"lastTransitionTime", since}};
  };
  Json conditions = Json::array(
      {condition("MemoryPressure", false, "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
       condition("DiskPressure", false, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
       condition("PIDPressure", false, "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
       condition("Ready", true, "KubeletReady", "kubelet is posting ready status")});
  return {{"status", {{"conditions", std::move(conditions)}}}};
}

Json NodeLease(const std::string& node, const std::string& node_uid, int duration_seconds,
               const std::string& now_micros) {
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", node}, {"namespace", kLeaseNamespace}}},
                {"spec",
                 {{"holderIdentity", node},
                  {"leaseDurationSeconds", duration_seconds},
                  {"renewTime", now_micros}}}};
  if (!node_uid.empty()) {
    lease["metadata"]["ownerReferences"] =
        Json::array({{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}, {"uid", node_uid}}});
  }
  return lease;
}

Json LeaseRenewPatch(const std::string& now_micros) {
  return {{"spec", {{"renewTime", now_micros}}}};
}

PodAction NextPodAction(const Json& pod) {
  if (pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp") &&
      !pod["metadata"]["deletionTimestamp"].is_null()) {
    return {PodAction::Kind::kRemove};
  }
  const std::string phase = StatusString(pod, "phase");
  if (phase.empty() || phase == "Pending") return {PodAction::Kind::kStart};
  if (phase == "Running") {
    if (std::optional<int> code = ToldExitCode(pod)) return {PodAction::Kind::kFinish, *code};
  }
  return {};
}

Json RunningStatusPatch(const Json& pod, const std::string& pod_ip, const std::string& host_ip,
                        const std::string& now) {
  apiserver::PodState state;
  state.phase = "Running";
  state.pod_ip = pod_ip;
  return {{"metadata", Uid(pod)}, {"status", PodStatus(pod, state, host_ip, now)}};
}

Json FinishedStatusPatch(const Json& pod, int exit_code, const std::string& now) {
  return {{"metadata", Uid(pod)},
          {"status",
           PodStatus(pod, apiserver::ToldState(pod, exit_code), StatusString(pod, "hostIP"), now)}};
}

Json StoppedStatusPatch(const Json& pod, const std::string& now) {
  Json status =
      pod.contains("status") && pod["status"].is_object() ? pod["status"] : Json::object();
  Json containers = Json::array();
  for (Json c : status.value("containerStatuses", Json::array())) {
    if (c.contains("state") && c["state"].contains("terminated")) {
      containers.push_back(std::move(c));
      continue;
    }
    std::string started = now;
    if (c.contains("state") && c["state"].contains("running")) {
      started = c["state"]["running"].value("startedAt", now);
    }
    c["state"] = {
        {"terminated",
         {{"exitCode", 0}, {"reason", "Completed"}, {"startedAt", started}, {"finishedAt", now}}}};
    c["ready"] = false;
    c["started"] = false;
    containers.push_back(std::move(c));
  }
  Json patch_status = {{"containerStatuses", std::move(containers)}};
  Json conditions = status.value("conditions", Json::array());
  for (Json& cond : conditions) {
    const std::string type = cond.value("type", "");
    if ((type == "Ready" || type == "ContainersReady") && cond.value("status", "") != "False") {
      cond["status"] = "False";
      cond["lastTransitionTime"] = now;
    }
  }
  patch_status["conditions"] = std::move(conditions);
  return {{"metadata", Uid(pod)}, {"status", std::move(patch_status)}};
}

}  // namespace dljob::sim_nodes
