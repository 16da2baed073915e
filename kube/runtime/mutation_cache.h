// MutationCache: the objects a controller has written that its informer has not delivered yet,
// after client-go's MutationCache. A reconcile pass that follows its own write (a status update,
// then the pod event it caused wakes the job again) reads the informer's cache before the watch
// has brought the write back; starting from that older object, its next write carries a stale
// resourceVersion and loses a 409 Conflict, and the pass is retried. Newer() gives the pass the
// object its write returned instead, while that is newer than the cached one.
//
// resourceVersions are compared as integers, as client-go's integer-resource-version mutation
// cache does (both etcd's revisions and the test API server's counter are); one that is not a
// number never counts as newer. An entry goes once the cache has caught up with it (Newer() or
// Observed() sees so), or with Forget() (the object was deleted). Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/mutex.h"

namespace dljob::kube {

class MutationCache {
 public:
  // Remembers `written`, the server's answer to a write (with its new resourceVersion), under
  // its namespace/name key.
  void Wrote(const nlohmann::json& written) EXCLUDES(mu_);
  // What the written object of `key` is, if it is newer than `cached` (the informer's copy);
  // otherwise `cached`, and the written object is forgotten.
  nlohmann::json Newer(const std::string& key, nlohmann::json cached) EXCLUDES(mu_);
  // The informer delivered `object`. When it is as new as the written object of its key, the
  // cache has caught up and the entry goes. Returns whether `object` is that write itself (the
  // same resourceVersion): an event the controller's own write caused, which tells it nothing.
  bool Observed(const nlohmann::json& object) EXCLUDES(mu_);
  void Forget(const std::string& key) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::string, nlohmann::json> written_ GUARDED_BY(mu_);
};

}  // namespace dljob::kube
