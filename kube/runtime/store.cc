#include "kube/runtime/store.h"

namespace dljob::kube {

void Store::IndexLocked(const std::string& key, const Json& object, bool add) {
  if (!index_) return;
  std::string value = index_(object);
  if (value.empty()) return;
  if (add) {
    by_index_[value].insert(key);
    return;
  }
  auto it = by_index_.find(value);
  if (it == by_index_.end()) return;
  it->second.erase(key);
  if (it->second.empty()) by_index_.erase(it);
}

std::optional<Json> Store::Upsert(const Json& object) {
  std::string key = ObjectKey(object);
  MutexLock lock(mu_);
  std::optional<Json> old;
  auto it = items_.find(key);
  if (it != items_.end()) {
    old = std::move(it->second);
    IndexLocked(key, *old, false);
  }
  items_[key] = object;
  IndexLocked(key, object, true);
  return old;
}

std::optional<Json> Store::Remove(const std::string& key) {
  MutexLock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  Json old = std::move(it->second);
  items_.erase(it);
  IndexLocked(key, old, false);
  return old;
}

std::optional<Json> Store::Get(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return it->second;
}

std::vector<Json> Store::List() const {
  MutexLock lock(mu_);
  std::vector<Json> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(object);
  return out;
}

std::vector<std::string> Store::Keys() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, object] : items_) out.push_back(key);
  return out;
}

std::vector<Json> Store::ByIndex(const std::string& value) const {
  MutexLock lock(mu_);
  std::vector<Json> out;
  auto it = by_index_.find(value);
  if (it == by_index_.end()) return out;
  for (const std::string& key : it->second) out.push_back(items_.at(key));
  return out;
}

size_t Store::Size() const {
  MutexLock lock(mu_);
  return items_.size();
}

}  // namespace dljob::kube
