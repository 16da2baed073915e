// What the operator benchmarks (operator_bench, queue_bench) share: the API server they run
// against — a fresh dljob-test-apiserver they start, or any server from a kubeconfig (the real
// kube-apiserver with dljob-sim-nodes' nodes) —, a watch that records when each object first
// reached each phase, and the process figures they report (CPU seconds, RSS).
//
// Benchmark code, not product code: errors are printed to stderr and returned as false/empty.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "kube/api.h"
#include "testing/command.h"

namespace dljob::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU seconds (user + system) process `pid` has used so far; -1 when it cannot be read.
double CpuSeconds(pid_t pid);
// A "kB" field of /proc/PID/status (VmRSS, VmHWM); -1 when it cannot be read.
long StatusKiB(pid_t pid, const std::string& field);

// The RSS of process `pid` over a run: sampled at once and then every `every_seconds` on a thread
// of its own until Stop(), each sample with two counts the caller's function gives (e.g. jobs
// submitted, jobs done). Table() is the samples as text; call it after Stop().
class RssSampler {
 public:
  struct Sample {
    double t = 0;  // seconds since the sampler started
    long rss_kib = 0;
    int first = 0, second = 0;
  };
  RssSampler(pid_t pid, double every_seconds, std::function<std::pair<int, int>()> counts);
  ~RssSampler() { Stop(); }
  void Stop();
  // "<title>:" and a row per sample: t, RSS in MiB, and the counts under these names.
  std::string Table(const char* title, const char* first_name, const char* second_name) const;

 private:
  std::vector<Sample> samples_;  // written by the thread until Stop() joins it
  std::atomic<bool> sampling_{true};
  std::jthread thread_;  // last: it uses the members above
};

// Runs fn(i) for i in [0, n) on `threads` threads; returns when all are done.
template <typename Fn>
void Parallel(int n, int threads, Fn fn) {
  std::atomic<int> next{0};
  std::vector<std::jthread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i; (i = next++) < n;) fn(i);
    });
  }
}

// True when `r` is ok; else prints "<program>: <what>: <error>" and returns false.
bool Must(const kube::ApiResult<kube::Json>& r, const std::string& what);

// Creates `object`, trying again (up to 5 times, 200 ms apart) while the server answers with a
// retryable error (5xx, 429, a transport failure); false after printing the last error.
bool CreateRetrying(kube::Api& api, const kube::Resource& resource, const std::string& ns,
                    const kube::Json& object, const std::string& what);

// The API server of a run.
struct BenchServer {
  std::string kubeconfig;
  std::unique_ptr<kube::Api> api;  // client-side rate limit off (qps 5000)
  bool real = false;               // from --kubeconfig: not a test API server of ours
  // The test API server's process; null for a server from a kubeconfig.
  std::unique_ptr<dljob::testing::Background> process;
};

// Starts dljob-test-apiserver in `dir` with `nodes` nodes of `gpus_per_node` GPUs (the DLJob and
// DLQueue CRDs installed, simulated kubelets starting bound pods at once); nullopt on failure.
// `program`: the dljob-test-apiserver to run; "" for this build's.
std::optional<BenchServer> StartTestServer(const std::string& dir, int nodes, int gpus_per_node,
                                           const std::string& program = "");
// Connects to the server of `kubeconfig`; nullopt when it cannot be loaded or reached.
std::optional<BenchServer> ConnectServer(const std::string& kubeconfig);

// The schedulable nodes with at least one allocatable nvidia.com/gpu, in name order (numbers in
// names compared as numbers: sim-node-2 before sim-node-10), with their GPUs.
struct GpuNode {
  std::string name;
  int gpus = 0;
};
std::vector<GpuNode> ListGpuNodes(kube::Api& api);

// Creates namespace `ns` and waits (up to 60 s) until pods may be created in it: on a server
// with the ServiceAccount admission plugin, until its "default" ServiceAccount exists with its
// token Secret (Kubernetes 1.20 refuses pods until the token controller has made it).
bool CreateNamespace(kube::Api& api, const std::string& ns, bool wait_for_service_account);
void DeleteNamespace(kube::Api& api, const std::string& ns);
// Deletes `ns` and waits until it is gone (a real server's namespace controller deletes what it
// holds first, which takes minutes for thousands of pods), saying how many pods are left every
// 10 s. False, with a warning, when it is still there after `limit_s`.
bool DeleteNamespaceAndWait(kube::Api& api, const std::string& ns, int limit_s);

// Watches `resource` in `ns` and records, per object name, when it was first seen in each phase
// of `phases` (status.phase). `on_phase(object, phase)` is called on the watch's thread the first
// time each incarnation (uid) of an object is seen in each of those phases. Re-lists after a
// closed watch or 410 Gone, from the last resourceVersion seen.
class PhaseWatch {
 public:
  using Callback = std::function<void(const kube::Json& object, const std::string& phase)>;
  PhaseWatch(kube::Api& api, const kube::Resource& resource, std::string ns,
             std::set<std::string> phases, Callback on_phase = {});
  ~PhaseWatch() { Stop(); }
  PhaseWatch(const PhaseWatch&) = delete;
  PhaseWatch& operator=(const PhaseWatch&) = delete;
  void Stop();
  // When `name` was first seen in `phase`; nullopt when it has not been.
  std::optional<Clock::time_point> When(const std::string& name, const std::string& phase);
  // How many objects have been seen in `phase`.
  int Count(const std::string& phase);

 private:
  void Run(kube::Api& api, const kube::Resource& resource, std::stop_token stop);
  void Record(const kube::Json& object);

  const std::string ns_;
  const std::set<std::string> phases_;
  Callback on_phase_;
  Mutex mu_;
  std::map<std::string, std::map<std::string, Clock::time_point>> first_ GUARDED_BY(mu_);
  std::set<std::pair<std::string, std::string>> uid_phases_ GUARDED_BY(mu_);
  std::map<std::string, int> counts_ GUARDED_BY(mu_);
  std::jthread thread_;  // last: it uses the members above
};

// Makes SIGINT and SIGTERM end a run cleanly: WaitPrinting() returns false once either arrives,
// so the bench stops the operator and the API server it started (their destructors) instead of
// leaving them running. Call first thing in main().
void StopOnSignals();
// Whether SIGINT or SIGTERM has arrived since StopOnSignals().
bool StopRequested();

// Blocks until `done()` returns at least `total`, printing "  <what>: n/total" every 10% of the
// way (or every 10 s); false after `timeout_ms`, on SIGINT/SIGTERM (StopOnSignals), or as soon
// as `watched` (the operator under test, when given) has exited, saying so.
bool WaitPrinting(const std::string& what, int total, const std::function<int()>& done,
                  int timeout_ms = 1'800'000, dljob::testing::Background* watched = nullptr);

}  // namespace dljob::bench
