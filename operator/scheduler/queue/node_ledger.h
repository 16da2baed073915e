// NodeLedger: the queue's copy of the cluster's nodes, kept current as it starts, suspends and
// finishes jobs, with the cheap bounds a scheduling pass checks before it asks a placement
// policy: how many workers of g GPUs the nodes of one GPU product could take at most.
//
// The bounds only count GPUs on schedulable nodes (a policy may still refuse for CPU, memory,
// taints or selectors), so a job over the bound cannot fit and the pass skips it without calling
// the policy. Scratch copies of the nodes (for what-if questions: what is free once these jobs
// end?) share the ledger's node order; RoomBound keeps one bound current on such a copy.
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

#include "operator/scheduler/cluster.h"

namespace dljob::scheduler {

// A WorkerRoom with no GPUs to count (a gang of CPU-only workers).
inline constexpr int64_t kUnboundedRoom = int64_t{1} << 60;

// The GPU product a gang asks for: Gang::gpu_model, else its nodeSelector's product label (""
// when any will do).
std::string GangProduct(const Gang& gang);
// workers × GPUs per worker.
int64_t GangGpus(const Gang& gang);
// The free amount of each resource of a node (allocatable − used, never below 0).
int64_t FreeGpus(const Node& node);

class NodeLedger {
 public:
  // Replaces the nodes. Their `used` must already count every running job.
  void Reset(std::vector<Node> nodes);
  const std::vector<Node>& nodes() const { return nodes_; }

  std::optional<size_t> Index(std::string_view name) const;
  const std::string& ProductOf(size_t node) const { return products_[node]; }
  // Whether a node could host a worker of a gang asking for `product` (GPU count aside).
  bool Eligible(size_t node, std::string_view product) const;

  // Adds (sign +1) or removes (sign −1) a placed gang's usage on `nodes` (the ledger's own or a
  // scratch copy in the same order). Workers on nodes the ledger does not know are skipped.
  void Apply(const Gang& gang, const Placement& placement, int sign,
             std::vector<Node>& nodes) const;
  void Apply(const Gang& gang, const Placement& placement, int sign) {
    Apply(gang, placement, sign, nodes_);
    ++version_;
  }
  // Sets each scratch node's `used` to the ledger's (the nodes must come from nodes()).
  void CopyUsedTo(std::vector<Node>& scratch) const;

  // A counter that moves whenever the ledger's own nodes change (RoomCache watches it).
  uint64_t version() const { return version_; }

 private:
  std::vector<Node> nodes_;
  std::vector<std::string> products_;
  std::unordered_map<std::string, size_t> index_;
  uint64_t version_ = 0;
};

// Free-GPU bounds of one node vector in the ledger's order (its own nodes or a scratch copy),
// computed on demand and kept until Invalidate() (or, over the ledger's own nodes, until they
// change).
class RoomCache {
 public:
  RoomCache(const NodeLedger& ledger, const std::vector<Node>& nodes)
      : ledger_(ledger), nodes_(nodes) {}
  void Invalidate() { valid_ = false; }

  // At most how many workers of `per_worker_gpus` the schedulable nodes of `product` ("" any)
  // have free GPUs for.
  int64_t WorkerRoom(const std::string& product, int64_t per_worker_gpus);
  // Free GPUs on the schedulable nodes of `product`, and the most on one node.
  int64_t FreeGpusOf(const std::string& product);
  int64_t LargestFreeOf(const std::string& product);

 private:
  void Refresh();
  const NodeLedger& ledger_;
  const std::vector<Node>& nodes_;
  bool valid_ = false;
  uint64_t version_ = 0;
  std::map<std::pair<std::string, int64_t>, int64_t> room_;
  std::map<std::string, std::pair<int64_t, int64_t>> free_;  // free, largest
};

// One WorkerRoom bound kept current on a scratch copy of the nodes while jobs are taken off or
// put back: call Before(node) before changing a node's `used` and After(node) after.
class RoomBound {
 public:
  RoomBound(const NodeLedger& ledger, const std::vector<Node>& nodes, std::string product,
            int64_t per_worker_gpus);
  int64_t room() const { return per_worker_gpus_ > 0 ? room_ : kUnboundedRoom; }
  void Before(size_t node) { room_ -= Contribution(node); }
  void After(size_t node) { room_ += Contribution(node); }

 private:
  int64_t Contribution(size_t node) const;
  const NodeLedger& ledger_;
  const std::vector<Node>& nodes_;
  std::string product_;
  int64_t per_worker_gpus_;
  int64_t room_ = 0;
};

}  // namespace dljob::scheduler
