#include "operator/scheduler/queue/node_ledger.h"

#include <algorithm>

namespace dljob::scheduler {

std::string GangProduct(const Gang& gang) {
  if (!gang.gpu_model.empty()) return gang.gpu_model;
  auto it = gang.node_selector.find(kGpuProductLabel);
  return it == gang.node_selector.end() ? std::string() : it->second;
}

int64_t GangGpus(const Gang& gang) { return gang.workers * gang.per_worker.gpus; }

int64_t FreeGpus(const Node& node) {
  return std::max<int64_t>(0, node.allocatable.gpus - node.used.gpus);
}

void NodeLedger::Reset(std::vector<Node> nodes) {
  nodes_ = std::move(nodes);
  products_.clear();
  index_.clear();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto it = nodes_[i].labels.find(kGpuProductLabel);
    products_.push_back(it == nodes_[i].labels.end() ? std::string() : it->second);
    index_.emplace(nodes_[i].name, i);
  }
  ++version_;
}

std::optional<size_t> NodeLedger::Index(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

bool NodeLedger::Eligible(size_t node, std::string_view product) const {
  return nodes_[node].schedulable && (product.empty() || products_[node] == product);
}

void NodeLedger::Apply(const Gang& gang, const Placement& placement, int sign,
                       std::vector<Node>& nodes) const {
  for (const std::string& name : placement.worker_nodes) {
    std::optional<size_t> i = Index(name);
    if (!i) continue;
    Resources& used = nodes[*i].used;
    used.gpus += sign * gang.per_worker.gpus;
    used.cpu_milli += sign * gang.per_worker.cpu_milli;
    used.memory_mib += sign * gang.per_worker.memory_mib;
    used.pods += sign * std::max<int64_t>(1, gang.per_worker.pods);
  }
}

void NodeLedger::CopyUsedTo(std::vector<Node>& scratch) const {
  for (size_t i = 0; i < nodes_.size(); ++i) scratch[i].used = nodes_[i].used;
}

void RoomCache::Refresh() {
  if (valid_ && (&nodes_ != &ledger_.nodes() || version_ == ledger_.version())) return;
  room_.clear();
  free_.clear();
  valid_ = true;
  version_ = ledger_.version();
}

int64_t RoomCache::WorkerRoom(const std::string& product, int64_t per_worker_gpus) {
  if (per_worker_gpus <= 0) return kUnboundedRoom;
  Refresh();
  auto [it, inserted] = room_.try_emplace({product, per_worker_gpus}, 0);
  if (inserted) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (ledger_.Eligible(i, product)) it->second += FreeGpus(nodes_[i]) / per_worker_gpus;
    }
  }
  return it->second;
}

int64_t RoomCache::FreeGpusOf(const std::string& product) {
  Refresh();
  auto [it, inserted] = free_.try_emplace(product, 0, 0);
  if (inserted) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!ledger_.Eligible(i, product)) continue;
      it->second.first += FreeGpus(nodes_[i]);
      it->second.second = std::max(it->second.second, FreeGpus(nodes_[i]));
    }
  }
  return it->second.first;
}

int64_t RoomCache::LargestFreeOf(const std::string& product) {
  FreeGpusOf(product);
  return free_.find(product)->second.second;
}

RoomBound::RoomBound(const NodeLedger& ledger, const std::vector<Node>& nodes, std::string product,
                     int64_t per_worker_gpus)
    : ledger_(ledger),
      nodes_(nodes),
      product_(std::move(product)),
      per_worker_gpus_(per_worker_gpus) {
  for (size_t i = 0; i < nodes_.size(); ++i) room_ += Contribution(i);
}

int64_t RoomBound::Contribution(size_t node) const {
  if (per_worker_gpus_ <= 0) return 0;
  if (!ledger_.Eligible(node, product_)) return 0;
  return FreeGpus(nodes_[node]) / per_worker_gpus_;
}

}  // namespace dljob::scheduler
