#include "kube/runtime/store.h"

#include <utility>

namespace dljob::kube {

void Store::IndexLocked(const std::string& key, const std::string& value, bool add) {
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

ObjectPtr Store::Unpack(const Value& v) const {
  if (!compact_) return v.object;
  return std::make_shared<const Json>(Json::from_msgpack(*v.packed));
}

Json Store::UnpackCopy(const Value& v) const {
  return compact_ ? Json::from_msgpack(*v.packed) : *v.object;
}

ObjectPtr Store::Upsert(Json object) {
  return Upsert(std::make_shared<const Json>(std::move(object)));
}

ObjectPtr Store::Upsert(ObjectPtr fresh) {
  std::string key = ObjectKey(*fresh);
  Kept kept;
  kept.index_value = index_ ? index_(*fresh) : std::string();
  if (compact_) {
    std::vector<uint8_t> packed = Json::to_msgpack(*fresh);
    packed.shrink_to_fit();
    kept.value.packed = std::make_shared<const std::vector<uint8_t>>(std::move(packed));
  } else {
    kept.value.object = std::move(fresh);
  }
  Kept old;
  bool had = false;
  {
    MutexLock lock(mu_);
    auto [it, added] = items_.try_emplace(key);
    if (!added) {
      old = std::exchange(it->second, Kept{});
      had = true;
      IndexLocked(key, old.index_value, false);
    }
    IndexLocked(key, kept.index_value, true);
    it->second = std::move(kept);
  }
  return had ? Unpack(old.value) : nullptr;
}

ObjectPtr Store::Remove(const std::string& key) {
  Kept old;
  {
    MutexLock lock(mu_);
    auto it = items_.find(key);
    if (it == items_.end()) return nullptr;
    old = std::move(it->second);
    items_.erase(it);
    IndexLocked(key, old.index_value, false);
  }
  return Unpack(old.value);
}

std::vector<Store::Value> Store::ValuesAll() const {
  MutexLock lock(mu_);
  std::vector<Value> out;
  out.reserve(items_.size());
  for (const auto& [key, kept] : items_) out.push_back(kept.value);
  return out;
}

std::vector<Store::Value> Store::ValuesByIndex(const std::string& value) const {
  MutexLock lock(mu_);
  std::vector<Value> out;
  auto it = by_index_.find(value);
  if (it == by_index_.end()) return out;
  for (const std::string& key : it->second) out.push_back(items_.at(key).value);
  return out;
}

std::optional<Json> Store::Get(const std::string& key) const {
  Value v;
  {
    MutexLock lock(mu_);
    auto it = items_.find(key);
    if (it == items_.end()) return std::nullopt;
    v = it->second.value;
  }
  return UnpackCopy(v);
}

std::vector<Json> Store::List() const {
  std::vector<Json> out;
  for (const Value& v : ValuesAll()) out.push_back(UnpackCopy(v));
  return out;
}

std::vector<Json> Store::ByIndex(const std::string& value) const {
  std::vector<Json> out;
  for (const Value& v : ValuesByIndex(value)) out.push_back(UnpackCopy(v));
  return out;
}

ObjectPtr Store::Find(const std::string& key) const {
  Value v;
  {
    MutexLock lock(mu_);
    auto it = items_.find(key);
    if (it == items_.end()) return nullptr;
    v = it->second.value;
  }
  return Unpack(v);
}

Objects Store::All() const {
  Objects out;
  for (const Value& v : ValuesAll()) out.push_back(Unpack(v));
  return out;
}

Objects Store::AllByIndex(const std::string& value) const {
  Objects out;
  for (const Value& v : ValuesByIndex(value)) out.push_back(Unpack(v));
  return out;
}

std::vector<std::string> Store::Keys() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, kept] : items_) out.push_back(key);
  return out;
}

size_t Store::Size() const {
  MutexLock lock(mu_);
  return items_.size();
}

}  // namespace dljob::kube
