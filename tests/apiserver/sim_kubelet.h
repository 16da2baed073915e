// SimKubelet: an optional stand-in for the kubelets of the simulated nodes. While enabled, every
// pod that is bound to a node (spec.nodeName set) and still Pending becomes Running and Ready
// `delay` after the kubelet first saw it bound, and a bound pod being deleted gracefully (by
// default the store marks it while the kubelet is enabled: ObjectStore::SetGracefulPodDeletion)
// is removed `delay` after the kubelet saw it marked, with the grace-0 delete a real kubelet sends
// once its containers stopped. A Running pod annotated sim.dljob.io/exit-code=<code> ends with that
// code (Succeeded with 0, Failed otherwise; ToldExitCode in sim_objects.h), as dljob-sim-nodes'
// pods do on a real API server. Tests that want other outcomes drive phases explicitly through
// /_test/pods/... instead (or as well).
//
// A node's kubelet can be stopped (SetNodeDown): its pods then neither start nor finish being
// deleted until it is started again, as on a node whose kubelet process is gone while the
// containers it started run on.
//
// It runs on its own thread, started by Enable() and joined by Disable() or the destructor.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "tests/apiserver/object_store.h"

namespace dljob::apiserver {

class SimKubelet {
 public:
  // REQUIRES: `store` outlives this object. `now` gives RFC 3339 times for pod status.
  // `graceful_deletion`: while enabled, turn the store's graceful pod deletion on (as a real
  // API server with kubelets behaves); false: deleted pods go at once.
  // `finished(ns, name)`, when set, is told of every pod this kubelet ends (on its thread).
  SimKubelet(ObjectStore& store, ResourceType pods, std::function<std::string()> now,
             bool graceful_deletion = true,
             std::function<void(const std::string&, const std::string&)> finished = nullptr);
  ~SimKubelet();

  void Enable(std::chrono::milliseconds delay);
  void Disable();
  bool enabled() const;
  std::chrono::milliseconds delay() const;
  void SetNodeDown(const std::string& node, bool down);

 private:
  void Run();

  ObjectStore& store_;
  const ResourceType pods_;
  const std::function<std::string()> now_;
  const bool graceful_deletion_;
  const std::function<void(const std::string&, const std::string&)> finished_;
  mutable Mutex mu_;
  std::thread thread_ GUARDED_BY(mu_);
  std::chrono::milliseconds delay_ GUARDED_BY(mu_){0};
  std::set<std::string> down_ GUARDED_BY(mu_);
  std::atomic<bool> stop_{true};
};

}  // namespace dljob::apiserver
