// The scheduler's picture of the cluster and of one gang: plain values, no API types.
//
// A Node is what placement needs of a Kubernetes Node (allocatable and used GPUs, CPU, memory and
// pods; labels; taints; whether it takes new pods) plus what dljob itself knows (the datasets
// whose cache is warm there). A Gang is what placement needs of a DLJob: workers × per-worker
// resources and where they may go. The operator builds both from informer objects, the trace
// simulator from CSV rows; the placement policies (placement_policy.h) and the queue read only
// these. Plain data; copy freely; no thread-safety concerns of its own.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jobs/dljob_types.h"

namespace dljob::scheduler {

// Labels the policies read. The rack label is configurable (PlacementOptions::rack_label).
inline constexpr char kGpuProductLabel[] = "nvidia.com/gpu.product";
inline constexpr char kGpuCliqueLabel[] = "nvidia.com/gpu.clique";  // one NVLink domain
inline constexpr char kZoneLabel[] = "topology.kubernetes.io/zone";
inline constexpr char kDefaultRackLabel[] = "dljob.io/rack";

// An amount of each resource placement accounts for. CPU in millicores, memory in MiB.
struct Resources {
  int64_t gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t pods = 0;
  bool operator==(const Resources&) const = default;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
  bool operator==(const Taint&) const = default;
};

struct Node {
  std::string name;
  Resources allocatable;  // status.allocatable; a zero cpu/memory/pods means "not accounted"
  Resources used;         // by pods bound or assumed there (any pod, not only dljob's)
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  bool schedulable = true;                // false when cordoned or not Ready
  std::set<std::string> cached_datasets;  // data sources (spec.data[].source) warm on this node
  bool operator==(const Node&) const = default;
};

// One requirement of a required node-affinity term (the Kubernetes NodeSelectorRequirement).
struct NodeSelectorRequirement {
  std::string key;
  std::string operator_;  // In | NotIn | Exists | DoesNotExist | Gt | Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};
// A term matches when all its requirements do; a node passes the affinity when any term matches.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  bool operator==(const NodeSelectorTerm&) const = default;
};

enum class Topology { kAny, kPack, kSpread };  // spec.scheduling.topology (unset: kAny)

struct Gang {
  std::string job;  // "namespace/name", for messages and tie-breaking
  int64_t workers = 0;
  Resources per_worker;  // pods is 1 per worker
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_affinity;  // empty: no affinity requirement
  std::vector<Toleration> tolerations;
  Topology topology = Topology::kAny;
  std::vector<std::string> datasets;  // data sources it reads, for cache locality
  // The GPU product it asks for (its nodeSelector's nvidia.com/gpu.product), for messages and the
  // queue's per-model accounting; "" when any. The node selector itself is what placement obeys.
  std::string gpu_model;
  bool operator==(const Gang&) const = default;
};

// Where each worker goes: worker i runs on worker_nodes[i].
struct Placement {
  std::vector<std::string> worker_nodes;
  bool operator==(const Placement&) const = default;
};

}  // namespace dljob::scheduler
