// Store: an informer's cache of one resource's objects, keyed "namespace/name" ("name" for
// cluster-scoped objects), with one optional secondary index.
//
// The informer writes it; reconcilers read it. Objects are held immutable and shared: an update
// replaces an object's pointer, never the object, so a reader holding an ObjectPtr keeps a
// consistent object for as long as it likes. Get/List/ByIndex return copies, for callers that
// change what they read (the reconcile's "copy before you modify" is built in); Find/Objects/
// ObjectsByIndex return the shared objects without copying them, for readers that only read (a
// queue pass over every job and pod). The index maps an object to one value (e.g. a child's
// owning job key) so a job's pods are found without a scan. Thread-safe.
//
// A compact store keeps each object packed (MessagePack: about a sixth of the heap of a JSON tree
// of the same object) and unpacks it on every read: Find/All/AllByIndex then return fresh objects
// and cost what Get/List/ByIndex do (about 20 µs for a 2 KB pod, three times a copy). It is for
// large caches that are read a few objects at a time (a job's pods); readers that pass over every
// object keep their own typed view from the informer's events instead.
#pragma once

#include <functional>
#include <map>
#include <memory>
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

// A cached object: shared, never changed.
using ObjectPtr = std::shared_ptr<const Json>;
using Objects = std::vector<ObjectPtr>;

class Store {
 public:
  // Returns the index value of an object, or "" for none.
  using IndexFunc = std::function<std::string(const Json&)>;

  explicit Store(IndexFunc index = nullptr, bool compact = false)
      : index_(std::move(index)), compact_(compact) {}
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts or replaces; returns the previous object (null when there was none; unpacked again in
  // a compact store).
  ObjectPtr Upsert(Json object);
  ObjectPtr Upsert(ObjectPtr object);  // REQUIRES: not null
  // Removes; returns the removed object (null when it was not there).
  ObjectPtr Remove(const std::string& key);

  // Copies.
  std::optional<Json> Get(const std::string& key) const;
  std::vector<Json> List() const;
  // Objects whose index value is `value`, in key order.
  std::vector<Json> ByIndex(const std::string& value) const;

  // The shared objects, not copied: null / in key order / the index's, as above.
  ObjectPtr Find(const std::string& key) const;
  Objects All() const;
  Objects AllByIndex(const std::string& value) const;

  std::vector<std::string> Keys() const;
  size_t Size() const;
  bool compact() const { return compact_; }

 private:
  // One object: shared as it is, or packed in a compact store; with its index value.
  struct Value {
    ObjectPtr object;                                    // null in a compact store
    std::shared_ptr<const std::vector<uint8_t>> packed;  // MessagePack; null in another
  };
  struct Kept {
    Value value;
    std::string index_value;
  };
  // The object, unpacked in a compact store (outside the lock: that takes a while).
  ObjectPtr Unpack(const Value& v) const;
  Json UnpackCopy(const Value& v) const;
  std::vector<Value> ValuesAll() const;
  std::vector<Value> ValuesByIndex(const std::string& value) const;
  void IndexLocked(const std::string& key, const std::string& value, bool add) REQUIRES(mu_);

  const IndexFunc index_;
  const bool compact_;
  mutable Mutex mu_;
  std::map<std::string, Kept> items_ GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_index_ GUARDED_BY(mu_);
};

}  // namespace dljob::kube
