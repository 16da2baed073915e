#include "scheduler/queue/node_ledger.h"

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
  ++version_;
  products_.clear();
  product_ids_.clear();
  index_.clear();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto it = nodes_[i].labels.find(kGpuProductLabel);
    const std::string product = it == nodes_[i].labels.end() ? std::string() : it->second;
    auto [id, fresh] = product_ids_.emplace(product, static_cast<int>(product_ids_.size()));
    products_.push_back(id->second);
    index_.emplace(nodes_[i].name, i);
  }
}

std::optional<size_t> NodeLedger::Index(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<size_t> NodeLedger::Indices(const Placement& placement) const {
  std::vector<size_t> out;
  out.reserve(placement.worker_nodes.size());
  for (const std::string& name : placement.worker_nodes) {
    if (std::optional<size_t> i = Index(name)) out.push_back(*i);
  }
  return out;
}

int NodeLedger::ProductId(std::string_view product) const {
  if (product.empty()) return kAnyProduct;
  auto it = product_ids_.find(product);
  return it == product_ids_.end() ? kNoSuchProduct : it->second;
}

void NodeLedger::Apply(const Gang& gang, const std::vector<size_t>& at, int sign,
                       std::vector<Node>& nodes) const {
  for (size_t i : at) {
    Resources& used = nodes[i].used;
    used.gpus += sign * gang.per_worker.gpus;
    used.cpu_milli += sign * gang.per_worker.cpu_milli;
    used.memory_mib += sign * gang.per_worker.memory_mib;
    used.pods += sign * std::max<int64_t>(1, gang.per_worker.pods);
  }
}

void NodeLedger::CopyUsedTo(std::vector<Node>& scratch) const {
  for (size_t i = 0; i < nodes_.size(); ++i) scratch[i].used = nodes_[i].used;
}

int64_t RoomCache::Contribution(const Bound& b, size_t node) const {
  if (!ledger_.Eligible(node, b.product_id)) return 0;
  return FreeGpus(nodes_[node]) / b.per_worker_gpus;
}

void RoomCache::Update(const std::vector<size_t>& nodes, int sign) {
  if (room_.empty() && free_.empty()) return;
  std::vector<size_t> unique = nodes;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  for (std::vector<Bound>* bounds : {&room_, &free_}) {
    for (Bound& b : *bounds) {
      for (size_t i : unique) b.value += sign * Contribution(b, i);
    }
  }
}

int64_t RoomCache::WorkerRoom(int product_id, int64_t per_worker_gpus) {
  if (per_worker_gpus <= 0) return kUnboundedRoom;
  for (const Bound& b : room_) {
    if (b.product_id == product_id && b.per_worker_gpus == per_worker_gpus) return b.value;
  }
  Bound b{product_id, per_worker_gpus, 0};
  for (size_t i = 0; i < nodes_.size(); ++i) b.value += Contribution(b, i);
  room_.push_back(b);
  return b.value;
}

int64_t RoomCache::FreeGpusOf(int product_id) {
  for (const Bound& b : free_) {
    if (b.product_id == product_id) return b.value;
  }
  Bound b{product_id, 1, 0};
  for (size_t i = 0; i < nodes_.size(); ++i) b.value += Contribution(b, i);
  free_.push_back(b);
  return b.value;
}

int64_t RoomCache::LargestFreeOf(int product_id) const {
  int64_t largest = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (ledger_.Eligible(i, product_id)) largest = std::max(largest, FreeGpus(nodes_[i]));
  }
  return largest;
}

RoomBound::RoomBound(const NodeLedger& ledger, const std::vector<Node>& nodes, int product_id,
                     int64_t per_worker_gpus)
    : ledger_(ledger), nodes_(nodes), product_id_(product_id), per_worker_gpus_(per_worker_gpus) {
  for (size_t i = 0; i < nodes_.size(); ++i) room_ += Contribution(i);
}

int64_t RoomBound::Contribution(size_t node) const {
  if (per_worker_gpus_ <= 0 || !ledger_.Eligible(node, product_id_)) return 0;
  return FreeGpus(nodes_[node]) / per_worker_gpus_;
}

void RoomBound::Apply(const Gang& gang, const std::vector<size_t>& at, int sign,
                      std::vector<Node>& nodes) {
  // Each node once, however many workers it has.
  std::vector<size_t> unique = at;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  for (size_t i : unique) Before(i);
  ledger_.Apply(gang, at, sign, nodes);
  for (size_t i : unique) After(i);
}

}  // namespace dljob::scheduler
