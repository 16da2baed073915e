#include "kube/runtime/store.h"

#include <utility>

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

ObjectPtr Store::Upsert(Json object) {
  return Upsert(std::make_shared<const Json>(std::move(object)));
}

ObjectPtr Store::Upsert(ObjectPtr fresh) {
  std::string key = ObjectKey(*fresh);
  MutexLock lock(mu_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::exchange(slot, fresh);
  if (old) IndexLocked(key, *old, false);
  IndexLocked(key, *fresh, true);
  return old;
}

ObjectPtr Store::Remove(const std::string& key) {
  MutexLock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  IndexLocked(key, *old, false);
  return old;
}

std::optional<Json> Store::Get(const std::string& key) const {
  if (ObjectPtr object = Find(key)) return *object;
  return std::nullopt;
}

std::vector<Json> Store::List() const {
  std::vector<Json> out;
  for (const ObjectPtr& object : All()) out.push_back(*object);
  return out;
}

std::vector<Json> Store::ByIndex(const std::string& value) const {
  std::vector<Json> out;
  for (const ObjectPtr& object : AllByIndex(value)) out.push_back(*object);
  return out;
}

ObjectPtr Store::Find(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

Objects Store::All() const {
  MutexLock lock(mu_);
  Objects out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(object);
  return out;
}

Objects Store::AllByIndex(const std::string& value) const {
  MutexLock lock(mu_);
  Objects out;
  auto it = by_index_.find(value);
  if (it == by_index_.end()) return out;
  for (const std::string& key : it->second) out.push_back(items_.at(key));
  return out;
}

std::vector<std::string> Store::Keys() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, object] : items_) out.push_back(key);
  return out;
}

size_t Store::Size() const {
  MutexLock lock(mu_);
  return items_.size();
}

}  // namespace dljob::kube
