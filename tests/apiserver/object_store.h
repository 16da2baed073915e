// ObjectStore: the test API server's in-memory objects, with Kubernetes semantics and no HTTP.
//
// Every write takes the next value of one global resourceVersion counter, stamps it on the object
// (metadata.resourceVersion) and appends an event (ADDED, MODIFIED, DELETED) to a bounded history;
// watches (watch_cursor.h) read that history. Create assigns uid, creationTimestamp, generation 1
// and, for an object with generateName and no name, a name as the real server makes it: the
// prefix (cut to 58 characters) and 5 characters of "bcdfghjklmnpqrstvwxz2456789" from a
// fixed-seed generator, drawn again while taken, up to 8 names, then 409 AlreadyExists ("… the
// server was not able to generate a unique name for the object"); updates bump generation when
// anything outside metadata and status changes, refuse a stale resourceVersion (409 Conflict), and
// are no-ops (no new version) when nothing changed. Types with a status subresource keep .status on
// main-resource writes; the Part::kStatus writes change only .status. Deleting an object deletes,
// recursively, every object whose ownerReferences name it (unless all of that dependent's owners
// are not gone yet, or the propagation policy is Orphan, which strips the reference instead);
// deleting a namespace deletes its contents.
//
// Finalizers and graceful deletion: deleting an object that has metadata.finalizers only sets
// metadata.deletionTimestamp (deletionGracePeriodSeconds 0); the object goes when an update
// removes its last finalizer. While SetGracefulPodDeletion(true) (the simulated kubelet is on,
// unless RestOptions::graceful_pod_deletion is false),
// deleting a pod bound to a node and not finished sets deletionTimestamp to now + the grace period
// (DeleteRequest's, else spec.terminationGracePeriodSeconds, else 30) and
// deletionGracePeriodSeconds; a later delete with grace 0 (what the kubelet sends) removes it.
// Clients cannot set or clear deletionTimestamp, nor add finalizers to an object being deleted.
// Garbage collection and namespace deletion remove dependents at once, with neither.
//
// Objects are stored as immutable shared JSON trees, so events and lists share them.
// Thread-safety: every method is safe to call from many threads (one mutex).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "kube/object_fields.h"
#include "tests/apiserver/api_errors.h"
#include "tests/apiserver/resource_types.h"
#include "tests/apiserver/selectors.h"

namespace dljob::apiserver {

using ObjectPtr = std::shared_ptr<const Json>;

// One entry of the history: `previous` is the object before a MODIFIED (null otherwise).
struct StoredEvent {
  uint64_t resource_version = 0;
  std::string key;   // ResourceType::Key()
  std::string type;  // "ADDED", "MODIFIED", "DELETED"
  ObjectPtr object;
  ObjectPtr previous;
};

struct ListQuery {
  LabelSelector labels;
  FieldSelector fields;
  int64_t limit = 0;  // 0: everything
  std::string continue_token;
};

struct DeleteRequest {
  std::string propagation_policy = "Background";  // Background | Foreground | Orphan
  std::optional<int64_t> grace_period_seconds;    // pods: unset is the pod's own
  std::string precondition_uid;
  std::string precondition_resource_version;
};

struct StoreOptions {
  size_t history_limit = 10000;    // events kept for watches; older versions answer 410
  bool require_namespaces = true;  // creating in a missing namespace is 404
  std::function<std::chrono::system_clock::time_point()> now;  // default: the system clock
};

class ObjectStore {
 public:
  enum class Part { kMain, kStatus };
  // Edits an object in place; returning an error leaves the object unchanged.
  using Mutation = std::function<std::optional<ApiError>(Json&)>;
  // A client write's admission (admission.h): called under the store's lock with the object
  // about to be stored (metadata filled in) and the stored one (null for a create); it may edit
  // the object (pruning) or refuse the write. It must not call back into the store.
  using Admission = std::function<std::optional<ApiError>(const Json* old, Json& object)>;
  // A client write's validating webhooks (webhook_dispatcher.h): called WITHOUT the store's lock,
  // after the Admission accepted the object, with the stored object the write started from (null
  // for a create) and the one about to be stored; it may refuse the write, and may read the store
  // meanwhile. When the stored object changed in between, the write starts again from the new one
  // (admission and review included), as the real server's guaranteed update does, so a write
  // with a resourceVersion precondition then fails with 409 Conflict; a create whose name was
  // taken in between is 409 AlreadyExists.
  using Review = std::function<std::optional<ApiError>(const Json* old, const Json& object)>;

  explicit ObjectStore(StoreOptions options = {});

  ApiResult<Json> Create(const ResourceType& type, const std::string& ns, Json object,
                         const Admission& admit = nullptr, const Review& review = nullptr);
  ApiResult<Json> Get(const ResourceType& type, const std::string& ns,
                      const std::string& name) const;
  // The stored object itself, shared and never changed (a write stores a new one); null when
  // there is none. For readers that only look (a followed log checking its pod), without a copy.
  ObjectPtr Find(const ResourceType& type, const std::string& ns, const std::string& name) const;
  // A `<Kind>List` with metadata.resourceVersion (and metadata.continue when limited). `ns` ""
  // lists every namespace.
  ApiResult<Json> List(const ResourceType& type, const std::string& ns,
                       const ListQuery& query) const;
  // PUT. An empty metadata.resourceVersion is an unconditional update, except for custom
  // resources (422, as the real server).
  ApiResult<Json> Update(const ResourceType& type, const std::string& ns, const std::string& name,
                         Json object, Part part = Part::kMain, const Admission& admit = nullptr,
                         const Review& review = nullptr);
  // RFC 7386 JSON merge patch. A metadata.resourceVersion in the patch is a precondition.
  ApiResult<Json> MergePatch(const ResourceType& type, const std::string& ns,
                             const std::string& name, const Json& patch, Part part = Part::kMain,
                             const Admission& admit = nullptr, const Review& review = nullptr);
  // Applies `mutation` to the whole object (status included): for the server's own writes
  // (binding, the simulated kubelet, test controls).
  ApiResult<Json> Mutate(const ResourceType& type, const std::string& ns, const std::string& name,
                         const Mutation& mutation);
  // Returns the deleted object (at its deletion resourceVersion).
  ApiResult<Json> Delete(const ResourceType& type, const std::string& ns, const std::string& name,
                         const DeleteRequest& request = {});
  // Deletes every object of a type (its CRD went away).
  void DeleteAll(const ResourceType& type);
  // Whether deleting a running pod waits for a kubelet (see the header comment).
  void SetGracefulPodDeletion(bool graceful);

  // Objects of a type by its key ("pods", "dljobs.dljob.io"); ns "" = all namespaces.
  std::vector<Json> Objects(const std::string& key, const std::string& ns = "") const;

  // --- for watches (watch_cursor.h) ---
  uint64_t resource_version() const;
  // The oldest version a watch may start from; watching from before it is 410 Gone.
  uint64_t compacted_version() const;
  // Matching current objects (for the synthetic ADDED events of a watch from ""/"0") and the
  // version they are current at.
  std::pair<std::vector<ObjectPtr>, uint64_t> Snapshot(const std::string& key,
                                                       const std::string& ns) const;
  // Events with version > after; false when the history no longer reaches back that far.
  bool EventsAfter(uint64_t after, std::vector<StoredEvent>* out, uint64_t* now_at) const;
  // Blocks until the version passes `after`, Interrupt() is called, or `deadline`.
  // Returns whether the version passed `after`.
  bool WaitPast(uint64_t after, std::chrono::steady_clock::time_point deadline) const;
  // Wakes every WaitPast (shutdown, dropped watches).
  void Interrupt();
  // Forgets the whole history: every version before now becomes too old to watch from.
  void CompactHistory();

 private:
  using TypeObjects = std::map<std::string, ObjectPtr>;  // by ObjectKey(ns, name)

  static std::string ObjectKey(const ResourceType& type, const std::string& ns,
                               const std::string& name);
  ObjectPtr FindLocked(const ResourceType& type, const std::string& ns,
                       const std::string& name) const REQUIRES(mu_);
  ApiResult<Json> CommitLocked(const ResourceType& type, const ObjectPtr& old, Json updated)
      REQUIRES(mu_);
  // The object an update of `old` stores (admission applied), or the error that refuses it.
  ApiResult<Json> PrepareUpdateLocked(const ResourceType& type, const ObjectPtr& old, Json object,
                                      Part part, const Admission& admit) REQUIRES(mu_);
  // Create's checks, names and admission: the object to store, or the error.
  ApiResult<Json> PrepareCreateLocked(const ResourceType& type, const std::string& ns, Json object,
                                      const Admission& admit) REQUIRES(mu_);
  Json CommitCreateLocked(const ResourceType& type, Json object) REQUIRES(mu_);
  // An update or merge patch: `prepare` (called with mu_ held) checks preconditions against the
  // stored object and makes the object to store; `review` runs unlocked (see Review).
  using Prepare = std::function<ApiResult<Json>(const ObjectPtr& old)>;
  ApiResult<Json> ReviewedUpdate(const ResourceType& type, const std::string& ns,
                                 const std::string& name, const Prepare& prepare,
                                 const Review& review);
  Json DeleteLocked(const std::string& key, const std::string& object_key,
                    const std::string& policy) REQUIRES(mu_);
  // The pod's grace period when its delete must wait for a kubelet; nullopt: delete now.
  std::optional<int64_t> GracePeriodLocked(const ResourceType& type, const Json& object,
                                           const DeleteRequest& request) const REQUIRES(mu_);
  void CollectGarbageLocked(const std::string& owner_uid, const std::string& policy) REQUIRES(mu_);
  // Adds (or removes) the object under each owner uid its ownerReferences name.
  void IndexOwnersLocked(const std::string& key, const std::string& object_key, const Json& object,
                         bool add) REQUIRES(mu_);
  void DeleteNamespaceContentsLocked(const std::string& ns) REQUIRES(mu_);
  void RecordLocked(StoredEvent event) REQUIRES(mu_);
  std::string NextUidLocked() REQUIRES(mu_);
  std::string NameSuffixLocked() REQUIRES(mu_);
  std::string NowText() const;

  const StoreOptions options_;
  mutable Mutex mu_;
  mutable std::condition_variable_any changed_;
  std::map<std::string, TypeObjects> objects_ GUARDED_BY(mu_);                // by type key
  std::unordered_map<std::string, std::string> uid_to_type_ GUARDED_BY(mu_);  // live uids
  // Owner uid → the (type key, object key) of objects that named it in ownerReferences: a
  // superset (a reference dropped by an update stays until either side is deleted), checked
  // before use, so deleting an owner looks at its dependents, not at every object.
  std::unordered_map<std::string, std::set<std::pair<std::string, std::string>>> dependents_
      GUARDED_BY(mu_);
  std::deque<StoredEvent> history_ GUARDED_BY(mu_);
  uint64_t version_ GUARDED_BY(mu_) = 0;
  uint64_t compacted_ GUARDED_BY(mu_) = 0;
  uint64_t interrupts_ GUARDED_BY(mu_) = 0;
  uint64_t uids_ GUARDED_BY(mu_) = 0;
  bool graceful_pods_ GUARDED_BY(mu_) = false;
  std::mt19937 names_ GUARDED_BY(mu_){20240611};
};

// Object identity for the server's parts: the accessors of kube/object_fields.h, as everywhere.
using kube::NameOf;
using kube::NamespaceOf;
using kube::ResourceVersionOf;
using kube::UidOf;

}  // namespace dljob::apiserver
