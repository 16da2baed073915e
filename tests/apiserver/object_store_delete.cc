// ObjectStore deletion: preconditions, namespace contents and ownerReference garbage collection.
// See object_store.h.
#include <utility>

#include "base/time_format.h"
#include "tests/apiserver/object_store.h"

namespace dljob::apiserver {
namespace {

bool OwnedBy(const Json& object, const std::string& owner_uid) {
  const Json& meta = object["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return false;
  for (const Json& ref : meta["ownerReferences"]) {
    if (ref.value("uid", "") == owner_uid) return true;
  }
  return false;
}

}  // namespace

ApiResult<Json> ObjectStore::Delete(const ResourceType& type, const std::string& ns,
                                    const std::string& name, const DeleteRequest& request) {
  MutexLock lock(mu_);
  ObjectPtr old = FindLocked(type, ns, name);
  if (!old) return NotFoundError(type.Key(), name);
  if (!request.precondition_uid.empty() && request.precondition_uid != UidOf(*old)) {
    return ConflictError(type.Key(), name,
                         "Precondition failed: UID in precondition: " + request.precondition_uid +
                             ", UID in object meta: " + UidOf(*old));
  }
  if (!request.precondition_resource_version.empty() &&
      request.precondition_resource_version != ResourceVersionOf(*old)) {
    return ConflictError(type.Key(), name,
                         "Precondition failed: ResourceVersion in precondition: " +
                             request.precondition_resource_version +
                             ", ResourceVersion in meta: " + ResourceVersionOf(*old));
  }
  const std::string& policy = request.propagation_policy;
  if (!policy.empty() && policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return BadRequestError("unsupported propagationPolicy \"" + policy + "\"");
  }
  const Json& meta = (*old)["metadata"];
  bool finalizers =
      meta.contains("finalizers") && meta["finalizers"].is_array() && !meta["finalizers"].empty();
  std::optional<int64_t> grace = GracePeriodLocked(type, *old, request);
  if (!finalizers && !grace) return DeleteLocked(type.Key(), ObjectKey(type, ns, name), policy);
  // Mark it: a kubelet or the holders of its finalizers finish the deletion.
  int64_t seconds = grace.value_or(0);
  if (meta.contains("deletionTimestamp") &&
      meta.value("deletionGracePeriodSeconds", int64_t{0}) <= seconds) {
    return *old;  // already being deleted, at least as soon
  }
  Json updated = *old;
  updated["metadata"]["deletionTimestamp"] =
      FormatRfc3339((options_.now ? options_.now() : std::chrono::system_clock::now()) +
                    std::chrono::seconds(seconds));
  updated["metadata"]["deletionGracePeriodSeconds"] = seconds;
  return CommitLocked(type, old, std::move(updated));
}

void ObjectStore::SetGracefulPodDeletion(bool graceful) {
  MutexLock lock(mu_);
  graceful_pods_ = graceful;
}

std::optional<int64_t> ObjectStore::GracePeriodLocked(const ResourceType& type, const Json& object,
                                                      const DeleteRequest& request) const {
  if (!graceful_pods_ || type.custom || type.Key() != "pods") return std::nullopt;
  const Json spec = object.value("spec", Json::object());
  std::string phase = object.contains("status") ? object["status"].value("phase", "") : "";
  if (spec.value("nodeName", "").empty() || phase == "Succeeded" || phase == "Failed") {
    return std::nullopt;  // no kubelet runs it: nothing to wait for
  }
  int64_t grace = request.grace_period_seconds
                      ? *request.grace_period_seconds
                      : spec.value("terminationGracePeriodSeconds", int64_t{30});
  if (grace <= 0) return std::nullopt;
  return grace;
}

Json ObjectStore::DeleteLocked(const std::string& key, const std::string& object_key,
                               const std::string& policy) {
  TypeObjects& objects = objects_[key];
  auto it = objects.find(object_key);
  ObjectPtr old = it->second;
  objects.erase(it);
  std::string uid = UidOf(*old);
  uid_to_type_.erase(uid);
  IndexOwnersLocked(key, object_key, *old, false);

  Json deleted = *old;
  deleted["metadata"]["resourceVersion"] = std::to_string(++version_);
  auto stored = std::make_shared<const Json>(deleted);
  RecordLocked({version_, key, "DELETED", stored, nullptr});

  if (key == "namespaces") DeleteNamespaceContentsLocked(NameOf(*old));
  CollectGarbageLocked(uid, policy);
  return deleted;
}

void ObjectStore::DeleteNamespaceContentsLocked(const std::string& ns) {
  std::vector<std::pair<std::string, std::string>> doomed;
  for (const auto& [key, objects] : objects_) {
    for (const auto& [object_key, obj] : objects) {
      if (key != "namespaces" && NamespaceOf(*obj) == ns) doomed.emplace_back(key, object_key);
    }
  }
  for (const auto& [key, object_key] : doomed) {
    if (objects_[key].count(object_key)) DeleteLocked(key, object_key, "Background");
  }
}

void ObjectStore::IndexOwnersLocked(const std::string& key, const std::string& object_key,
                                    const Json& object, bool add) {
  const Json& meta = object["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return;
  for (const Json& ref : meta["ownerReferences"]) {
    const std::string owner = ref.value("uid", "");
    if (owner.empty()) continue;
    if (add) {
      dependents_[owner].emplace(key, object_key);
      continue;
    }
    auto it = dependents_.find(owner);
    if (it == dependents_.end()) continue;
    it->second.erase({key, object_key});
    if (it->second.empty()) dependents_.erase(it);
  }
}

void ObjectStore::CollectGarbageLocked(const std::string& owner_uid, const std::string& policy) {
  auto named = dependents_.find(owner_uid);
  if (named == dependents_.end()) return;
  // In (type key, object key) order, as a scan of every object would find them.
  const std::set<std::pair<std::string, std::string>> dependents = std::move(named->second);
  dependents_.erase(named);
  for (const auto& [key, object_key] : dependents) {
    auto it = objects_[key].find(object_key);
    if (it == objects_[key].end()) continue;  // already collected through another owner
    ObjectPtr dependent = it->second;
    if (!OwnedBy(*dependent, owner_uid)) continue;  // an update dropped the reference
    if (policy == "Orphan") {
      Json updated = *dependent;
      Json& refs = updated["metadata"]["ownerReferences"];
      Json kept = Json::array();
      for (const Json& ref : refs) {
        if (ref.value("uid", "") != owner_uid) kept.push_back(ref);
      }
      if (kept.empty()) {
        updated["metadata"].erase("ownerReferences");
      } else {
        refs = std::move(kept);
      }
      updated["metadata"]["resourceVersion"] = std::to_string(++version_);
      auto stored = std::make_shared<const Json>(std::move(updated));
      it->second = stored;
      RecordLocked({version_, key, "MODIFIED", stored, dependent});
      continue;
    }
    bool owner_alive = false;
    for (const Json& ref : (*dependent)["metadata"]["ownerReferences"]) {
      owner_alive = owner_alive || uid_to_type_.count(ref.value("uid", "")) > 0;
    }
    if (!owner_alive) DeleteLocked(key, object_key, "Background");
  }
}

void ObjectStore::DeleteAll(const ResourceType& type) {
  MutexLock lock(mu_);
  std::vector<std::string> keys;
  for (const auto& [object_key, obj] : objects_[type.Key()]) keys.push_back(object_key);
  for (const std::string& k : keys) {
    if (objects_[type.Key()].count(k)) DeleteLocked(type.Key(), k, "Background");
  }
}

}  // namespace dljob::apiserver
