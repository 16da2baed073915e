// Store: an informer's cache of one resource's objects, keyed "namespace/name" ("name" for
// cluster-scoped objects), with one optional secondary index.
//
// The informer writes it; reconcilers read it. Reads return copies, so a caller can never change
// the cached object (the reconcile's "copy before you modify" is built in). The index maps an
// object to one value (e.g. a child's owning job key) so a job's pods are found without a scan.
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "kube/object_fields.h"

namespace dljob::kube {

using Json = nlohmann::json;

using kube::ObjectKey;
using kube::ResourceVersionOf;

class Store {
 public:
  // Returns the index value of an object, or "" for none.
  using IndexFunc = std::function<std::string(const Json&)>;

  explicit Store(IndexFunc index = nullptr) : index_(std::move(index)) {}
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts or replaces; returns the previous object, if any.
  std::optional<Json> Upsert(const Json& object);
  // Removes; returns the removed object, if it was there.
  std::optional<Json> Remove(const std::string& key);
  std::optional<Json> Get(const std::string& key) const;
  std::vector<Json> List() const;
  std::vector<std::string> Keys() const;
  // Objects whose index value is `value`, in key order.
  std::vector<Json> ByIndex(const std::string& value) const;
  size_t Size() const;

 private:
  void IndexLocked(const std::string& key, const Json& object, bool add) REQUIRES(mu_);

  const IndexFunc index_;
  mutable Mutex mu_;
  std::map<std::string, Json> items_ GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_index_ GUARDED_BY(mu_);
};

}  // namespace dljob::kube
