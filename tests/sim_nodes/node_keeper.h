// NodeKeeper: the node half of dljob-sim-nodes' simulated kubelets. It registers the nodes of a
// NodeTable (sim_node_objects.h) with an API server, keeps them alive the way a 1.20 kubelet does
// — each node's Lease in kube-node-lease renewed every renew_period (the node lifecycle
// controller's health signal) and a node status heartbeat every status_period — and deregisters
// them (Leases, then Nodes).
//
// Scale: a fixed pool of threads (Options::threads), none per node. Node i's renewals are due at
// start + renew_period * i / count + k * renew_period, so the renewals of 1,000 nodes are spread
// evenly over the period rather than sent in bursts; each thread walks its share of the nodes in
// that order. A renewal that fails is counted (stats()) and tried again at its next turn: the
// lease lasts lease_seconds, several periods.
//
// Thread-safety: Register, Start, Stop and Deregister from one thread, in that order; stats()
// from any thread. The Api must outlive this object.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "kube/api.h"
#include "tests/sim_nodes/sim_node_objects.h"

namespace dljob::sim_nodes {

// Runs fn(i) for i in [0, n) on `threads` threads until one fails; then no new i starts, and the
// first error (in order of i) is returned.
Status ParallelFor(int n, int threads, const std::function<Status(int)>& fn);

class NodeKeeper {
 public:
  struct Options {
    NodeTable table;
    int lease_seconds = 40;  // the kubelet's default nodeLeaseDurationSeconds
    std::chrono::milliseconds renew_period{10'000};  // 1/4 of the duration, as the kubelet
    std::chrono::milliseconds status_period{60'000};
    int threads = 16;  // blocking calls: 16 keep 100 renewals/s going at 160 ms a call
  };
  struct Stats {
    long renewals = 0;
    long heartbeats = 0;
    long failures = 0;
    double max_late_seconds = 0;  // the latest a renewal was sent after it was due
    std::string last_error;
  };

  NodeKeeper(kube::Api& api, Options options);
  ~NodeKeeper();

  // Creates every node (taking over one that exists: its status is refreshed) and its Lease,
  // creating kube-node-lease when the server lacks it. Fails on the first node or lease that
  // cannot be written, naming it.
  Status Register();
  // Starts the renewal threads. REQUIRES: Register() succeeded.
  void Start();
  // Stops them (promptly: a waiting thread wakes up).
  void Stop();
  // Deletes every Lease, then every Node (absent ones are fine).
  Status Deregister();

  const std::vector<std::string>& names() const { return names_; }
  Stats stats() const;

 private:
  void RenewLoop(int thread);
  void NoteFailure(const std::string& what, const kube::ApiError& error);

  kube::Api& api_;
  const Options options_;
  std::vector<std::string> names_;
  std::vector<std::string> uids_;
  std::string registered_at_;  // the conditions' lastTransitionTime
  std::vector<std::thread> threads_;
  std::chrono::steady_clock::time_point start_;

  mutable Mutex mu_;
  std::condition_variable_any wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  double max_late_seconds_ GUARDED_BY(mu_) = 0;
  std::string last_error_ GUARDED_BY(mu_);
  std::atomic<long> renewals_{0};
  std::atomic<long> heartbeats_{0};
  std::atomic<long> failures_{0};
};

}  // namespace dljob::sim_nodes
