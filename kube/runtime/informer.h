// Informer: keeps a Store in step with one resource on the API server and tells handlers what
// changed (the reflector of client-go, the watcher state machine of kube-rs).
//
//   list (ListAll) ──► replace the store, resourceVersion = the list's
//     ▲                    │
//     │ 410 Gone,          ▼
//     │ ERROR event    watch from resourceVersion ──► apply ADDED / MODIFIED / DELETED,
//     └────────────────────┤                          remember each event's resourceVersion
//                          │                          (BOOKMARKs only move the version)
//                          ├─ stream ended normally ─► watch again from the last version
//                          └─ connection broke ─────► back off, watch again from the last version
// A failed list backs off and lists again. HasSynced() turns true after the first list.
//
// Handlers run on the informer's thread, outside the store's lock; they must be quick (the
// controller's only enqueue a key). Run() blocks until its stop token is requested; stopping
// cancels a watch in progress. Add handlers before Run(). Store reads and HasSynced() are
// thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "kube/api.h"
#include "kube/runtime/duration.h"
#include "kube/runtime/store.h"

namespace dljob::kube {

struct EventHandlers {
  std::function<void(const Json& object)> on_add;
  std::function<void(const Json& old_object, const Json& object)> on_update;
  std::function<void(const Json& object)> on_delete;
};

struct InformerOptions {
  std::string ns;              // "" = all namespaces
  std::string label_selector;  // e.g. "dljob.io/job-name" (has the label)
  int watch_timeout_seconds = 300;
  int64_t page_size = 500;
  Duration initial_backoff{100};
  Duration max_backoff{std::chrono::seconds(30)};
  std::string field_selector;  // e.g. "spec.nodeName!=" (bound pods)
  // Applied to every object before it is stored and handed to handlers, to keep only what the
  // readers need (memory). It must keep metadata.name, namespace and resourceVersion.
  std::function<Json(Json)> transform;
  // Keep the objects packed (Store's compact mode): a sixth of the memory, each read unpacks.
  bool compact = false;
};

class Informer {
 public:
  Informer(kube::Api& api, kube::Resource resource, InformerOptions options,
           Store::IndexFunc index = nullptr);
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // REQUIRES: before Run().
  void AddHandlers(EventHandlers handlers);
  void Run(std::stop_token stop);

  bool HasSynced() const { return synced_.load(); }
  const Store& store() const { return store_; }
  Store& store() { return store_; }
  const kube::Resource& resource() const { return resource_; }
  // How many times the informer has listed (the first list included); for tests and metrics.
  int Lists() const { return lists_.load(); }
  // The resourceVersion the next watch starts from ("" before the first list).
  std::string LastResourceVersion() const;

 private:
  enum class WatchEnd { kStopped, kRelist, kRewatch, kBackoff };

  bool List();
  WatchEnd Watch(std::stop_token stop);
  // Applies one event to the store (its object moved into the transform, not copied); false
  // when the stream says to re-list.
  bool Apply(kube::WatchEvent event);
  void SetResourceVersion(std::string rv);
  void Replace(const std::vector<Json>& items);
  // Sleeps for the current backoff (or until stopped) and doubles it.
  void Backoff(std::stop_token stop);

  void NotifyAdd(const Json& object);
  void NotifyUpdate(const Json& old_object, const Json& object);
  void NotifyDelete(const Json& object);

  kube::Api& api_;
  const kube::Resource resource_;
  const InformerOptions options_;
  Store store_;
  std::vector<EventHandlers> handlers_;
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0};
  Duration backoff_;
  std::string last_list_error_;  // Run's thread only: a failed list is logged once per error
  mutable Mutex rv_mu_;
  std::string rv_ GUARDED_BY(rv_mu_);  // written only by the Run() thread
  Mutex sleep_mu_;                     // guards nothing: Backoff's wait needs a lock to release
  std::condition_variable_any sleep_cv_;
};

}  // namespace dljob::kube
