// What dljob-sim-nodes writes to a real API server, as pure functions of their inputs: the Node
// objects of the node table (GPU capacity, the labels scripts/cluster/kube-up.sh gives its nodes),
// their Leases in kube-node-lease, each node's fake pod subnet, and what a kubelet does to a pod
// it sees (start it, finish it when told, remove it when it is being deleted) with the status it
// writes. Built on the test API server's simulation (tests/apiserver/sim_objects.h), so both
// servers' simulated nodes and pods look alike. Thread-safe (no state).
//
// The "told to finish" rule (apiserver::ToldExitCode, the same on dljob-test-apiserver's
// simulated kubelets): a Running pod carrying the annotation sim.dljob.io/exit-code with a
// decimal exit code ends with it — Succeeded with 0, Failed otherwise — its containers terminated
// with that code, e.g.
//   kubectl annotate pod worker-0 sim.dljob.io/exit-code=0
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/apiserver/sim_objects.h"

namespace dljob::sim_nodes {

using Json = nlohmann::json;

using apiserver::kExitCodeAnnotation;
using apiserver::ToldExitCode;
inline constexpr char kSimulatedLabel[] = "dljob.io/simulated-node";
inline constexpr char kLeaseNamespace[] = "kube-node-lease";

// The node table: node i (0-based) of a run is `<prefix><first_index + i>`.
struct NodeTable {
  std::string prefix = "sim-node-";
  int count = 10;
  int first_index = 0;
  int gpus = 8;
  std::string gpu_product = "NVIDIA-A100-SXM4-80GB";
  std::string cpu = "96";
  std::string memory = "768Gi";
  int max_pods = 110;
  int nodes_per_clique = 1;  // kube-up: one NVLink clique per node
  int nodes_per_rack = 2;    // kube-up: two nodes per rack
  std::string zone = "zone-a";
  // The kubelet endpoint every node names (kubelet_logs.h): its InternalIP is this address and
  // status.daemonEndpoints.kubeletEndpoint.Port this port. Port 0: none (the node's own NodeIp,
  // where nothing listens).
  std::string kubelet_address = "127.0.0.1";
  int kubelet_port = 0;
};

// The number (first_index + i) that names node i, its clique and rack and its addresses.
int NodeNumber(const NodeTable& table, int i);
std::string NodeName(const NodeTable& table, int i);
// Node n's fake network: 127.<64 + n / 256>.<n % 256>.0/24 (n < 16384); the node's InternalIP
// is .1 and its pods take .2 … .254 in turn (`slot` modulo 253). Loopback on purpose: the API
// server dials a node's InternalIP for pod logs, exec and the node proxy, and nothing of a
// simulated node may send traffic off this machine (it is refused here: nothing listens).
std::string NodeIp(int number);
std::string PodIp(int number, unsigned slot);

// Node i as its kubelet registers it: Ready, capacity = allocatable (cpu, memory, pods,
// nvidia.com/gpu), kube-up's labels (nvidia.com/gpu.product, .count, .clique, dljob.io/rack,
// topology.kubernetes.io/zone, kubernetes.io/hostname) plus kSimulatedLabel, the four pressure
// conditions False, InternalIP and Hostname addresses, podCIDR, and the table's kubelet
// endpoint when it has one. `now`: RFC 3339.
Json NodeObject(const NodeTable& table, int i, const std::string& now);
// The Ready and pressure conditions with lastHeartbeatTime `now` and lastTransitionTime
// `since`: the body a kubelet's status heartbeat sends (a merge patch of nodes/status).
Json NodeHeartbeatPatch(const std::string& since, const std::string& now);
// The node's Lease (coordination.k8s.io/v1) in kube-node-lease, owned by the Node (`node_uid`),
// held by the node, renewed at `now_micros` (RFC 3339 with six fractional digits: MicroTime).
Json NodeLease(const std::string& node, const std::string& node_uid, int duration_seconds,
               const std::string& now_micros);
Json LeaseRenewPatch(const std::string& now_micros);

// What a kubelet does next to a pod bound to one of its nodes.
struct PodAction {
  enum class Kind { kNone, kStart, kFinish, kRemove };
  Kind kind = Kind::kNone;
  int exit_code = 0;  // kFinish
};
// kRemove: deletionTimestamp set (whatever the phase); kStart: Pending (or no phase yet);
// kFinish: Running and told to finish (the annotation holds an integer); kNone otherwise,
// including a Running pod whose annotation is not an integer.
PodAction NextPodAction(const Json& pod);

// The bodies of the merge patches to pods/status. Each carries metadata.uid, so it applies to
// this incarnation of the pod only (the API server answers 409 otherwise).
// Running and Ready: PodScheduled, Initialized, ContainersReady and Ready True, every container
// running and ready, podIP/podIPs `pod_ip`, hostIP `host_ip`, startTime `now`.
Json RunningStatusPatch(const Json& pod, const std::string& pod_ip, const std::string& host_ip,
                        const std::string& now);
// Succeeded (exit 0) or Failed, every container terminated with `exit_code` (Completed/Error),
// not ready; podIP, hostIP and startTime kept.
Json FinishedStatusPatch(const Json& pod, int exit_code, const std::string& now);
// A pod being deleted: containers terminated (exit 0 for a pod that ran, reason Completed), not
// ready; the phase kept. What the kubelet reports before its grace-0 delete.
Json StoppedStatusPatch(const Json& pod, const std::string& now);

}  // namespace dljob::sim_nodes
