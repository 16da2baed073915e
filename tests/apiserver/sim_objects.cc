// See sim_objects.h.
#include "tests/apiserver/sim_objects.h"

#include <charconv>
#include <functional>

#include "kube/object_fields.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

Json Condition(const std::string& type, bool status, const std::string& now) {
  return {{"type", type},
          {"status", status ? "True" : "False"},
          {"lastProbeTime", nullptr},
          {"lastTransitionTime", now}};
}

void SetCondition(Json& status, const std::string& type, bool value, const std::string& now) {
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  for (Json& c : conditions) {
    if (c.value("type", "") != type) continue;
    if (c.value("status", "") != (value ? "True" : "False")) c = Condition(type, value, now);
    return;
  }
  conditions.push_back(Condition(type, value, now));
}

}  // namespace

void ApplyPodState(Json& pod, const PodState& state, const std::string& now) {
  Json& status = pod["status"];
  if (!status.is_object()) status = Json::object();
  std::string phase = state.phase.empty() ? status.value("phase", "Pending") : state.phase;
  status["phase"] = phase;
  bool running = phase == "Running";
  bool finished = phase == "Succeeded" || phase == "Failed";
  bool ready = state.ready.value_or(running);
  if (!state.message.empty()) status["message"] = state.message;
  if (phase != "Pending" && !status.contains("startTime")) status["startTime"] = now;
  std::string node = kube::NodeNameOf(pod);
  if (!node.empty() || phase != "Pending") {
    SetCondition(status, "PodScheduled", true, now);
    size_t h = std::hash<std::string>{}(kube::NameOf(pod));
    status["podIP"] = state.pod_ip.empty() ? "10.0." + std::to_string(h % 250) + "." +
                                                 std::to_string(h / 250 % 250 + 2)
                                           : state.pod_ip;
    status["hostIP"] = status["podIP"];
  }
  SetCondition(status, "Initialized", phase != "Pending", now);
  SetCondition(status, "ContainersReady", ready, now);
  SetCondition(status, "Ready", ready, now);

  Json statuses = Json::array();
  Json containers =
      pod.contains("spec") ? pod["spec"].value("containers", Json::array()) : Json::array();
  const Json old = status.value("containerStatuses", Json::array());
  for (const Json& c : containers) {
    std::string name = c.value("name", "");
    Json cs = {{"name", name},       {"image", c.value("image", "")},
               {"imageID", ""},      {"ready", ready},
               {"started", running}, {"restartCount", 0}};
    for (const Json& o : old) {
      if (o.value("name", "") == name) cs["restartCount"] = o.value("restartCount", 0);
    }
    if (state.restart_count) cs["restartCount"] = *state.restart_count;
    if (finished) {
      int code = state.exit_code.value_or(phase == "Succeeded" ? 0 : 1);
      std::string reason =
          state.reason.empty() ? (code == 0 ? "Completed" : "Error") : state.reason;
      cs["state"] = {
          {"terminated",
           {{"exitCode", code}, {"reason", reason}, {"startedAt", now}, {"finishedAt", now}}}};
      cs["started"] = false;
    } else if (running) {
      cs["state"] = {{"running", {{"startedAt", now}}}};
    } else {
      cs["state"] = {
          {"waiting", {{"reason", state.reason.empty() ? "ContainerCreating" : state.reason}}}};
    }
    statuses.push_back(std::move(cs));
  }
  status["containerStatuses"] = std::move(statuses);
}

PodState PodStateFromJson(const Json& body) {
  PodState s;
  s.phase = body.value("phase", "");
  if (body.contains("ready")) s.ready = body["ready"].get<bool>();
  if (body.contains("exitCode")) s.exit_code = body["exitCode"].get<int>();
  s.reason = body.value("reason", "");
  s.message = body.value("message", "");
  if (body.contains("restartCount")) s.restart_count = body["restartCount"].get<int>();
  s.pod_ip = body.value("podIP", "");
  return s;
}

bool PodFinished(const Json& pod) {
  if (!pod.contains("status") || !pod["status"].is_object()) return false;
  std::string phase = pod["status"].value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

std::optional<int> ToldExitCode(const Json& pod) {
  if (!pod.contains("metadata") || !pod["metadata"].contains("annotations") ||
      !pod["metadata"]["annotations"].is_object()) {
    return std::nullopt;
  }
  const Json& annotations = pod["metadata"]["annotations"];
  auto it = annotations.find(kExitCodeAnnotation);
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  const std::string& text = it->get_ref<const std::string&>();
  int code = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return code;
}

PodState ToldState(const Json& pod, int exit_code) {
  PodState state;
  state.phase = exit_code == 0 ? "Succeeded" : "Failed";
  state.exit_code = exit_code;
  if (pod.contains("status") && pod["status"].is_object()) {
    state.pod_ip = pod["status"].value("podIP", "");
  }
  return state;
}

NodeSpec NodeSpecFromJson(const Json& body) {
  NodeSpec s;
  s.name = body.value("name", "");
  s.gpus = body.value("gpus", 8);
  s.cpu = body.value("cpu", s.cpu);
  s.memory = body.value("memory", s.memory);
  s.gpu_product = body.value("gpuProduct", s.gpu_product);
  if (body.contains("labels")) s.labels = body["labels"];
  if (body.contains("taints")) s.taints = body["taints"];
  return s;
}

Json SimulatedNode(const NodeSpec& spec, const std::string& now) {
  Json labels = {{"kubernetes.io/hostname", spec.name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"}};
  if (spec.gpus > 0) {
    labels["nvidia.com/gpu.present"] = "true";
    labels["nvidia.com/gpu.count"] = std::to_string(spec.gpus);
    labels["nvidia.com/gpu.product"] = spec.gpu_product;
  }
  if (spec.labels.is_object()) labels.update(spec.labels);
  Json resources = {{"cpu", spec.cpu},
                    {"memory", spec.memory},
                    {"pods", "110"},
                    {"nvidia.com/gpu", std::to_string(spec.gpus)}};
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", spec.name}, {"labels", labels}}},
               {"spec", Json::object()},
               {"status",
                {{"capacity", resources},
                 {"allocatable", resources},
                 {"conditions",
                  {{{"type", "Ready"},
                    {"status", "True"},
                    {"reason", "KubeletReady"},
                    {"message", "kubelet is posting ready status"},
                    {"lastHeartbeatTime", now},
                    {"lastTransitionTime", now}}}},
                 {"addresses", {{{"type", "Hostname"}, {"address", spec.name}}}},
                 {"nodeInfo",
                  {{"kubeletVersion", "v1.32.0-dljob-sim"},
                   {"operatingSystem", "linux"},
                   {"architecture", "amd64"}}}}}};
  if (spec.taints.is_array() && !spec.taints.empty()) node["spec"]["taints"] = spec.taints;
  return node;
}

void SetNodeReachable(Json& node, bool reachable, const std::string& now) {
  static constexpr char kUnreachable[] = "node.kubernetes.io/unreachable";
  Json& status = node["status"];
  if (!status["conditions"].is_array()) status["conditions"] = Json::array();
  Json* ready = nullptr;
  for (Json& c : status["conditions"]) {
    if (c.value("type", "") == "Ready") ready = &c;
  }
  if (!ready) {
    status["conditions"].push_back({{"type", "Ready"}});
    ready = &status["conditions"].back();
  }
  const std::string want = reachable ? "True" : "Unknown";
  if (ready->value("status", "") == want) return;
  *ready = {{"type", "Ready"},
            {"status", want},
            {"reason", reachable ? "KubeletReady" : "NodeStatusUnknown"},
            {"message", reachable ? "kubelet is posting ready status"
                                  : "Kubelet stopped posting node status."},
            {"lastHeartbeatTime", (*ready).value("lastHeartbeatTime", now)},
            {"lastTransitionTime", now}};
  if (reachable) (*ready)["lastHeartbeatTime"] = now;
  Json taints = Json::array();
  for (const Json& t : node["spec"].value("taints", Json::array())) {
    if (t.value("key", "") != kUnreachable) taints.push_back(t);
  }
  if (!reachable) {
    for (const char* effect : {"NoSchedule", "NoExecute"}) {
      Json taint = {{"key", kUnreachable}, {"effect", effect}};
      if (std::string(effect) == "NoExecute") taint["timeAdded"] = now;
      taints.push_back(taint);
    }
  }
  if (taints.empty()) {
    node["spec"].erase("taints");
  } else {
    node["spec"]["taints"] = taints;
  }
}

}  // namespace dljob::apiserver
