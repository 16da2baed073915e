// `dljob top nodes`: what each node of a cluster has and what is taken, and a summary per GPU
// product — built from Node and Pod objects with the operator's own reading of them
// (scheduler/kube_objects.h), so "allocated" here is what the operator places against.
//
//   NAME         GPUS   ALLOCATED   FREE   PRODUCT                 CLIQUE   SCHEDULABLE
//   gpu-node-0   8      6           2      NVIDIA-A100-SXM4-80GB   c0       yes (tainted)
//   gpu-node-1   8      0           8      NVIDIA-A100-SXM4-80GB   c0       cordoned
//
//   PRODUCT                 NODES   GPUS   ALLOCATED   FREE   LARGEST FREE
//   NVIDIA-A100-SXM4-80GB   2       16     6           2      2 (gpu-node-0)
//   total                   2       16     6           2      2 (gpu-node-0)
//
// ALLOCATED sums the nvidia.com/gpu requests (limits where no request is given) of the pods bound
// to the node that have not finished, in every namespace. FREE and LARGEST FREE count only nodes
// that take new pods (neither cordoned nor NotReady; a tainted node does, for the pods that
// tolerate its taints): they answer "where could a gang go now". wide adds CPU, MEMORY and PODS
// (requested/allocatable), ZONE, RACK (dljob.io/rack) and TAINTS. json and yaml print the same
// report as an object ({"nodes": [...], "summary": {...}}): there is no API object that holds it.
//
// Pure functions of their inputs; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/output.h"
#include "scheduler/cluster.h"

namespace dljob {

struct NodeRow {
  std::string name;
  scheduler::Resources allocatable;
  scheduler::Resources requested;               // by the bound, unfinished pods
  std::string gpu_product, clique, zone, rack;  // labels; "" when unset
  bool cordoned = false;
  bool ready = true;
  std::vector<scheduler::Taint> taints;

  bool TakesNewPods() const { return !cordoned && ready; }
  int64_t FreeGpus() const;  // allocatable less requested, never below 0
  // "yes", "yes (tainted)" (a NoSchedule or NoExecute taint), "cordoned", "NotReady",
  // "cordoned,NotReady".
  std::string Schedulable() const;
};

// The nodes of one GPU product ("" for GPU nodes without the label), or of all (the total).
struct ProductSummary {
  std::string gpu_product;
  int64_t nodes = 0;      // total: every node; per product: the nodes with GPUs
  int64_t gpus = 0;       // allocatable
  int64_t allocated = 0;  // requested by pods
  int64_t free = 0;       // on nodes that take new pods
  int64_t largest_free = 0;
  std::string largest_free_node;  // "" when no such node has a free GPU
};

struct NodeReport {
  std::vector<NodeRow> nodes;            // by name
  std::vector<ProductSummary> products;  // by product, GPU nodes only
  ProductSummary total;                  // gpu_product "": every node
  int64_t unavailable_free = 0;          // GPUs not allocated on cordoned or NotReady nodes
};

// `pods` are the pods bound to nodes and not finished (ClusterReader::BoundPods); a pod bound to
// a node not in `nodes` is ignored.
NodeReport BuildNodeReport(const std::vector<nlohmann::json>& nodes,
                           const std::vector<nlohmann::json>& pods);

std::string FormatNodeReport(const NodeReport& report, OutputFormat format);

// 95500 → "95.5", 2000 → "2", 250 → "250m" (cores with one decimal at most; millicores under
// one core).
std::string FormatCores(int64_t milli);
// 1056742 → "1032Gi", 512 → "512Mi" (Gi once there is one, rounded down).
std::string FormatMib(int64_t mib);

}  // namespace dljob
