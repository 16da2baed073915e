// Builders of cluster.h values for the scheduler's tests: a node or a gang in one line, with
// fluent setters for the rest.
//
//   Node n = GpuNode("n1", 8).Used(4).Label(kZoneLabel, "z1").Cpu(64000);
//   Gang g = MakeGang(2, 8).Selector(kGpuProductLabel, "A100");
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster.h"

namespace dljob::scheduler::testing {

struct NodeBuilder {
  Node node;
  NodeBuilder& Used(int64_t gpus) {
    node.used.gpus = gpus;
    return *this;
  }
  NodeBuilder& Cpu(int64_t allocatable_milli, int64_t used_milli = 0) {
    node.allocatable.cpu_milli = allocatable_milli;
    node.used.cpu_milli = used_milli;
    return *this;
  }
  NodeBuilder& Memory(int64_t allocatable_mib, int64_t used_mib = 0) {
    node.allocatable.memory_mib = allocatable_mib;
    node.used.memory_mib = used_mib;
    return *this;
  }
  NodeBuilder& Pods(int64_t allocatable, int64_t used = 0) {
    node.allocatable.pods = allocatable;
    node.used.pods = used;
    return *this;
  }
  NodeBuilder& Label(const std::string& key, const std::string& value) {
    node.labels[key] = value;
    return *this;
  }
  NodeBuilder& Taint(const std::string& key, const std::string& value,
                     const std::string& effect = "NoSchedule") {
    node.taints.push_back({key, value, effect});
    return *this;
  }
  NodeBuilder& Cordoned() {
    node.schedulable = false;
    return *this;
  }
  NodeBuilder& Caches(const std::string& dataset) {
    node.cached_datasets.insert(dataset);
    return *this;
  }
  operator Node() const { return node; }  // NOLINT(google-explicit-constructor)
};

// A schedulable node named `name` with `gpus` allocatable GPUs and nothing else accounted.
inline NodeBuilder GpuNode(const std::string& name, int64_t gpus) {
  NodeBuilder b;
  b.node.name = name;
  b.node.allocatable.gpus = gpus;
  return b;
}

struct GangBuilder {
  Gang gang;
  GangBuilder& Cpu(int64_t milli) {
    gang.per_worker.cpu_milli = milli;
    return *this;
  }
  GangBuilder& Memory(int64_t mib) {
    gang.per_worker.memory_mib = mib;
    return *this;
  }
  GangBuilder& Selector(const std::string& key, const std::string& value) {
    gang.node_selector[key] = value;
    return *this;
  }
  // The nodeSelector on nvidia.com/gpu.product, as GangOf(DLJob) reads it.
  GangBuilder& Model(const std::string& product) {
    gang.node_selector[kGpuProductLabel] = product;
    gang.gpu_model = product;
    return *this;
  }
  GangBuilder& Affinity(std::vector<NodeSelectorTerm> terms) {
    gang.required_affinity = std::move(terms);
    return *this;
  }
  GangBuilder& Tolerate(const std::string& key, const std::string& op = "Exists",
                        const std::string& value = "", const std::string& effect = "") {
    gang.tolerations.push_back({key, op, value, effect, std::nullopt});
    return *this;
  }
  GangBuilder& Topo(Topology t) {
    gang.topology = t;
    return *this;
  }
  GangBuilder& Reads(const std::string& dataset) {
    gang.datasets.push_back(dataset);
    return *this;
  }
  operator Gang() const { return gang; }  // NOLINT(google-explicit-constructor)
};

// `workers` × `gpus` GPUs and one pod each, job "ns/job".
inline GangBuilder MakeGang(int64_t workers, int64_t gpus) {
  GangBuilder b;
  b.gang.job = "ns/job";
  b.gang.workers = workers;
  b.gang.per_worker = {gpus, 0, 0, 1};
  return b;
}

using Names = std::vector<std::string>;

}  // namespace dljob::scheduler::testing
