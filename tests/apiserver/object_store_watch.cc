// ObjectStore's history, read by watches. See object_store.h and watch_cursor.h.
#include <algorithm>

#include "tests/apiserver/object_store.h"

namespace dljob::apiserver {

uint64_t ObjectStore::resource_version() const {
  MutexLock lock(mu_);
  return version_;
}

uint64_t ObjectStore::compacted_version() const {
  MutexLock lock(mu_);
  return compacted_;
}

std::pair<std::vector<ObjectPtr>, uint64_t> ObjectStore::Snapshot(const std::string& key,
                                                                  const std::string& ns) const {
  MutexLock lock(mu_);
  std::vector<ObjectPtr> out;
  auto t = objects_.find(key);
  if (t != objects_.end()) {
    for (const auto& [object_key, obj] : t->second) {
      if (ns.empty() || NamespaceOf(*obj) == ns) out.push_back(obj);
    }
  }
  return {std::move(out), version_};
}

bool ObjectStore::EventsAfter(uint64_t after, std::vector<StoredEvent>* out,
                              uint64_t* now_at) const {
  MutexLock lock(mu_);
  *now_at = version_;
  if (after < compacted_) return false;
  auto first =
      std::upper_bound(history_.begin(), history_.end(), after,
                       [](uint64_t v, const StoredEvent& e) { return v < e.resource_version; });
  out->insert(out->end(), first, history_.end());
  return true;
}

bool ObjectStore::WaitPast(uint64_t after, std::chrono::steady_clock::time_point deadline) const {
  MutexLock lock(mu_);
  const uint64_t interrupts = interrupts_;
  changed_.wait_until(
      mu_, deadline, [&]() REQUIRES(mu_) { return version_ > after || interrupts_ != interrupts; });
  return version_ > after;
}

void ObjectStore::Interrupt() {
  MutexLock lock(mu_);
  ++interrupts_;
  changed_.notify_all();
}

void ObjectStore::CompactHistory() {
  MutexLock lock(mu_);
  history_.clear();
  compacted_ = version_;
  changed_.notify_all();
}

}  // namespace dljob::apiserver
