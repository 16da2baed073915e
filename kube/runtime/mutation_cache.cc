#include "kube/runtime/mutation_cache.h"

#include <charconv>
#include <optional>

#include "kube/object_fields.h"

namespace dljob::kube {
namespace {

std::optional<unsigned long long> VersionNumber(const nlohmann::json& object) {
  const std::string rv = ResourceVersionOf(object);
  unsigned long long n = 0;
  auto [end, error] = std::from_chars(rv.data(), rv.data() + rv.size(), n);
  if (rv.empty() || error != std::errc() || end != rv.data() + rv.size()) return std::nullopt;
  return n;
}

}  // namespace

void MutationCache::Wrote(const nlohmann::json& written) {
  if (!VersionNumber(written)) return;
  MutexLock lock(mu_);
  written_[ObjectKey(written)] = written;
}

nlohmann::json MutationCache::Newer(const std::string& key, nlohmann::json cached) {
  MutexLock lock(mu_);
  auto it = written_.find(key);
  if (it == written_.end()) return cached;
  std::optional<unsigned long long> mine = VersionNumber(it->second);
  std::optional<unsigned long long> theirs = VersionNumber(cached);
  if (mine && theirs && *mine > *theirs) return it->second;
  written_.erase(it);  // the cache has caught up (or cannot be compared): it is the truth
  return cached;
}

bool MutationCache::Observed(const nlohmann::json& object) {
  std::optional<unsigned long long> theirs = VersionNumber(object);
  MutexLock lock(mu_);
  auto it = written_.find(ObjectKey(object));
  if (it == written_.end()) return false;
  std::optional<unsigned long long> mine = VersionNumber(it->second);
  if (mine && theirs && *mine > *theirs) return false;  // still behind our write
  written_.erase(it);
  return mine && theirs && *mine == *theirs;
}

void MutationCache::Forget(const std::string& key) {
  MutexLock lock(mu_);
  written_.erase(key);
}

size_t MutationCache::size() const {
  MutexLock lock(mu_);
  return written_.size();
}

}  // namespace dljob::kube
