// PodRunner: the pod half of dljob-sim-nodes' simulated kubelets. One watch of every pod bound to
// a node (fieldSelector spec.nodeName!=), filtered by this process's node names, feeds a keyed
// work queue; worker threads do what a kubelet would (NextPodAction, sim_node_objects.h) through
// the pods/status subresource: start a Pending pod (Running, Ready, a pod IP from its node's
// subnet), finish a Running pod told to (the sim.dljob.io/exit-code annotation), and for a pod
// being deleted gracefully mark its containers terminated and delete it with grace period 0.
//
// The queue holds each pod once (its newest object): events for a pod being worked on are taken
// up after that work, so no two workers touch one pod and a burst of events costs one action.
// An action already done for a pod's uid is not repeated; a failed one is retried after a second.
// The watch re-lists on 410 Gone and re-opens when the server ends it.
//
// Thread-safety: Start and Stop from one thread; stats() from any. The Api must outlive this.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "kube/api.h"
#include "tests/sim_nodes/sim_node_objects.h"

namespace dljob::sim_nodes {

class PodRunner {
 public:
  struct Stats {
    long started = 0;   // pods turned Running
    long finished = 0;  // Succeeded or Failed when told
    long removed = 0;   // deleted after graceful deletion
    long status_updates = 0;
    long failures = 0;
    long queued = 0;  // pods waiting for a worker now
    std::string last_error;
  };

  // What else happens when this runner starts or finishes a pod, or sees it deleted (the kubelet
  // endpoint's logs, kubelet_logs.h). Each may be empty; called from the runner's threads.
  struct Hooks {
    std::function<void(const Json& pod)> started;
    std::function<void(const Json& pod, int exit_code)> finished;
    std::function<void(const Json& pod)> removed;
  };

  // `nodes`: node name → node number (NodeNumber), for the pod IPs. `host_ip`: every pod's
  // hostIP when the nodes share one address (NodeTable::kubelet_address); "": its node's NodeIp.
  PodRunner(kube::Api& api, std::unordered_map<std::string, int> nodes, int threads,
            Hooks hooks = {}, std::string host_ip = "");
  ~PodRunner();

  void Start();
  void Stop();
  Stats stats() const;

 private:
  using Key = std::string;  // namespace/name
  struct Entry {
    Json pod;
    bool queued = false;
    bool busy = false;
    bool dirty = false;  // a newer object arrived while busy
    bool gone = false;   // deleted while queued or busy: forgotten once that work is done
    std::string done_uid;
    PodAction::Kind done = PodAction::Kind::kNone;
  };

  void WatchLoop();
  void Worker();
  void Offer(Json pod);
  void Forget(const Json& pod);
  // After work on `key`: queues it again if a newer object came, forgets it if it was deleted.
  void Settle(const Key& key) REQUIRES(mu_);
  // Carries out `action` on `pod`; false when it should be retried.
  bool Act(const Json& pod, const PodAction& action);
  void NoteFailure(const std::string& what, const kube::ApiError& error);

  kube::Api& api_;
  const std::unordered_map<std::string, int> nodes_;
  const int threads_;
  const Hooks hooks_;
  const std::string host_ip_;
  std::vector<std::thread> workers_;
  std::thread watcher_;

  mutable Mutex mu_;
  std::condition_variable_any wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::unordered_map<Key, Entry> pods_ GUARDED_BY(mu_);
  std::deque<Key> queue_ GUARDED_BY(mu_);
  std::multimap<std::chrono::steady_clock::time_point, Key> retry_ GUARDED_BY(mu_);
  std::unordered_map<std::string, unsigned> next_slot_ GUARDED_BY(mu_);
  std::string last_error_ GUARDED_BY(mu_);
  kube::WatchStream* stream_ GUARDED_BY(mu_) = nullptr;  // the open watch, for Stop() to cancel

  std::atomic<long> started_{0}, finished_{0}, removed_{0}, updates_{0}, failures_{0};
};

}  // namespace dljob::sim_nodes
