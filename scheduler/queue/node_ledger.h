// NodeLedger: the queue's copy of the cluster's nodes, kept current as it starts, suspends and
// finishes jobs, with the cheap bounds a scheduling pass checks before it asks a placement
// policy: how many workers of g GPUs the nodes of one GPU product could take at most.
//
// The bounds only count GPUs on schedulable nodes (a policy may still refuse for CPU, memory,
// taints or selectors), so a job over the bound cannot fit and the pass skips it without calling
// the policy. Scratch copies of the nodes (for what-if questions: what is free once these jobs
// end?) share the ledger's node order; RoomBound keeps one bound current on such a copy. GPU
// products are small integers (ProductId), so the hot loops compare numbers, not strings.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/cluster.h"

namespace dljob::scheduler {

// A WorkerRoom with no GPUs to count (a gang of CPU-only workers).
inline constexpr int64_t kUnboundedRoom = int64_t{1} << 60;
// ProductId of "" (any product), and of a product no node has.
inline constexpr int kAnyProduct = -1;
inline constexpr int kNoSuchProduct = -2;

// The GPU product a gang asks for: Gang::gpu_model, else its nodeSelector's product label (""
// when any will do).
std::string GangProduct(const Gang& gang);
// workers × GPUs per worker.
int64_t GangGpus(const Gang& gang);
// Free GPUs of a node (allocatable − used, never below 0).
int64_t FreeGpus(const Node& node);

class NodeLedger {
 public:
  // Replaces the nodes. Their `used` must already count every running job.
  void Reset(std::vector<Node> nodes);
  const std::vector<Node>& nodes() const { return nodes_; }

  std::optional<size_t> Index(std::string_view name) const;
  // The indices of a placement's nodes (unknown names skipped).
  std::vector<size_t> Indices(const Placement& placement) const;
  int ProductId(std::string_view product) const;
  // Whether a node could host a worker of a gang asking for the product (GPU count aside).
  bool Eligible(size_t node, int product_id) const {
    return nodes_[node].schedulable && (product_id == kAnyProduct || products_[node] == product_id);
  }

  // Adds (sign +1) or removes (sign −1) the usage of a gang with workers on `at` (indices, one
  // per worker) to `nodes` (the ledger's own or a scratch copy in the same order).
  void Apply(const Gang& gang, const std::vector<size_t>& at, int sign,
             std::vector<Node>& nodes) const;
  void Apply(const Gang& gang, const std::vector<size_t>& at, int sign) {
    Apply(gang, at, sign, nodes_);
    ++version_;
  }
  // Changes with every Reset and Apply to the ledger's own nodes: equal versions, equal nodes.
  uint64_t version() const { return version_; }
  // Sets each scratch node's `used` to the ledger's (the nodes must come from nodes()).
  void CopyUsedTo(std::vector<Node>& scratch) const;

 private:
  std::vector<Node> nodes_;
  std::vector<int> products_;  // ProductId of each node's product
  std::map<std::string, int, std::less<>> product_ids_;
  std::unordered_map<std::string, size_t> index_;
  uint64_t version_ = 0;
};

// Free-GPU bounds of one node vector in the ledger's order (its own nodes or a scratch copy):
// each bound is computed when first asked and then kept current as nodes change, which the
// owner announces with Before(nodes) and After(nodes) around the change (or Invalidate() after
// changing many). A pass asks the same few bounds (one per GPU model and worker size) for every
// job it scans, so they cost O(nodes) once and O(workers) per change.
class RoomCache {
 public:
  RoomCache(const NodeLedger& ledger, const std::vector<Node>& nodes)
      : ledger_(ledger), nodes_(nodes) {}
  void Invalidate() {
    room_.clear();
    free_.clear();
  }
  void Before(const std::vector<size_t>& changing) { Update(changing, -1); }
  void After(const std::vector<size_t>& changed) { Update(changed, +1); }

  // At most how many workers of `per_worker_gpus` the schedulable nodes of the product have
  // free GPUs for.
  int64_t WorkerRoom(int product_id, int64_t per_worker_gpus);
  // Free GPUs on the schedulable nodes of the product.
  int64_t FreeGpusOf(int product_id);
  // The most free GPUs on one of them (not kept; O(nodes)).
  int64_t LargestFreeOf(int product_id) const;

 private:
  struct Bound {
    int product_id;
    int64_t per_worker_gpus;  // 1 for the free-GPU count
    int64_t value;
  };
  int64_t Contribution(const Bound& b, size_t node) const;
  void Update(const std::vector<size_t>& nodes, int sign);
  const NodeLedger& ledger_;
  const std::vector<Node>& nodes_;
  std::vector<Bound> room_;
  std::vector<Bound> free_;
};

// One WorkerRoom bound kept current on a scratch copy of the nodes while jobs are taken off or
// put back: call Before(node) before changing a node's `used` and After(node) after.
class RoomBound {
 public:
  RoomBound(const NodeLedger& ledger, const std::vector<Node>& nodes, int product_id,
            int64_t per_worker_gpus);
  int64_t room() const { return per_worker_gpus_ > 0 ? room_ : kUnboundedRoom; }
  void Before(size_t node) { room_ -= Contribution(node); }
  void After(size_t node) { room_ += Contribution(node); }
  // Apply(gang, at, sign) on the scratch nodes, keeping the bound current.
  void Apply(const Gang& gang, const std::vector<size_t>& at, int sign, std::vector<Node>& nodes);

 private:
  int64_t Contribution(size_t node) const;
  const NodeLedger& ledger_;
  const std::vector<Node>& nodes_;
  int product_id_;
  int64_t per_worker_gpus_;
  int64_t room_ = 0;
};

}  // namespace dljob::scheduler
