// What the simulated cluster writes into objects: a pod's status as a kubelet would report it
// (phase, Ready condition, one containerStatus per container with running/terminated state and
// exit code) and simulated GPU nodes (capacity/allocatable nvidia.com/gpu, GPU labels, Ready).
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dljob::apiserver {

struct PodState {
  std::string phase;             // Pending, Running, Succeeded, Failed ("" keeps the phase)
  std::optional<bool> ready;     // default: phase == Running
  std::optional<int> exit_code;  // terminated containers' exit code (default 0 / 1 by phase)
  std::string reason;            // terminated reason (default Completed / Error)
  std::string message;           // status.message
  std::optional<int> restart_count;
  std::string pod_ip;  // default: 10.0.<n>.<m> from the name
};

// Writes `state` into pod.status; `now` is an RFC 3339 time for the conditions and states.
void ApplyPodState(nlohmann::json& pod, const PodState& state, const std::string& now);
// Reads a PodState from the /_test JSON ({"phase", "ready", "exitCode", "reason", "message",
// "restartCount", "podIP"}).
PodState PodStateFromJson(const nlohmann::json& body);
bool PodFinished(const nlohmann::json& pod);

// The "told to finish" rule of the simulated kubelets (SimKubelet here, dljob-sim-nodes on a real
// API server): a Running pod annotated sim.dljob.io/exit-code with a decimal exit code ends with
// it, Succeeded with 0 and Failed otherwise. The annotation's code; nullopt when it is absent or
// not a decimal integer (whatever the phase).
inline constexpr char kExitCodeAnnotation[] = "sim.dljob.io/exit-code";
std::optional<int> ToldExitCode(const nlohmann::json& pod);
// The state such a pod ends in: phase, exit code (reason and the rest by ApplyPodState's
// defaults), its pod IP kept.
PodState ToldState(const nlohmann::json& pod, int exit_code);

struct NodeSpec {
  std::string name;
  int gpus = 8;
  std::string cpu = "96";
  std::string memory = "768Gi";
  std::string gpu_product = "NVIDIA-A100-SXM4-80GB";
  nlohmann::json labels = nlohmann::json::object();  // added to the GPU labels
  nlohmann::json taints = nlohmann::json::array();
};

NodeSpec NodeSpecFromJson(const nlohmann::json& body);
// A v1 Node with Ready status (no metadata.resourceVersion; the store assigns it).
nlohmann::json SimulatedNode(const NodeSpec& spec, const std::string& now);
// What the node lifecycle controller does to a node whose kubelet stopped posting status
// (`reachable` false): Ready becomes Unknown (NodeStatusUnknown, "Kubelet stopped posting node
// status.") and the node.kubernetes.io/unreachable taints, NoSchedule and NoExecute, are added;
// and what follows the kubelet's return (true): Ready True again, the taints removed. A node
// already in that state is left as it is.
void SetNodeReachable(nlohmann::json& node, bool reachable, const std::string& now);

}  // namespace dljob::apiserver
