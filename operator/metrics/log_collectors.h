// LogCollectors: a LogCollector per launcher pod that has started, kept in step with the pods the
// operator sees, all driven by a few threads.
//
// One poller thread (epoll) waits on every followed log's socket and runs the reading steps of
// the collectors whose sockets are readable (or whose streams' times are up); a few worker
// threads (LogCollectorOptions::threads) run the steps that call out — opening a log, the final
// publish — and the flushes. So following 10,000 launchers takes 10,000 sockets, not 10,000
// threads; a slow call holds one worker, never the reading of the other logs.
//
// Sync() is given the launcher pods (those labelled dljob.io/role=launcher; LauncherPodSet keeps
// them from the pod informer's events) on every pass of the operator's loop. A pod that has started
// (phase Running, Succeeded or Failed) and has no collector gets one, keyed by the pod's uid, so a
// restarted job's new launcher (same name, new uid) is followed afresh and archived after the
// previous one. A collector whose log ended stays recorded until its pod disappears, so a finished
// pod is never followed twice. A collector is told when its pod shows the launcher container ended
// (terminated, or the pod finished: LogCollector::ContainerEnded); until then the end of a stream
// is not the end of the log. Line counts and the last progress time are kept per job
// ("namespace/name") across incarnations.
//
// Sync() queues each running collector's due flush (LogCollector::FlushDue) for the workers.
// Sync() and StopAll() are called from one thread (the operator's loop); LastProgress(), Counts()
// and Following() from any. Sync() returns once the collectors of pods that are gone have
// finished; the destructor stops every collector and joins the threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mutex.h"
#include "kube/api.h"
#include "operator/metrics/job_metrics.h"
#include "operator/metrics/log_collector.h"

namespace dljob::metrics {

// Publishes throughput with a JSON merge patch of the DLJob's status subresource.
class ApiThroughputSink : public ThroughputSink {
 public:
  explicit ApiThroughputSink(kube::Api& api) : api_(api) {}
  Status Publish(const std::string& ns, const std::string& job,
                 const Throughput& throughput) override;

 private:
  kube::Api& api_;
};

// A launcher pod, as Sync reads it.
struct LauncherPod {
  std::string ns, name, uid;
  std::string job;       // its dljob.io/job-name label
  std::string created;   // metadata.creationTimestamp
  bool started = false;  // phase Running, Succeeded or Failed
  bool ended = false;    // the launcher container has ended: terminated, or the pod finished
  bool operator==(const LauncherPod&) const = default;
};
LauncherPod LauncherPodOf(const nlohmann::json& pod);

// The launcher pods, kept from a pod informer's events as Sync reads them, so the operator's loop
// does not read every pod each second. Thread-safe.
class LauncherPodSet {
 public:
  // A launcher pod added or changed (the caller picks the launchers).
  void Upsert(const nlohmann::json& pod) EXCLUDES(mu_);
  // A pod deleted, by its "namespace/name" (any pod: one not kept is ignored).
  void Remove(const std::string& key) EXCLUDES(mu_);
  std::vector<LauncherPod> All() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::string, LauncherPod> by_key_ GUARDED_BY(mu_);
};

class LogCollectors {
 public:
  LogCollectors(LogOpener open, ThroughputSink& sink, LogCollectorOptions options);
  ~LogCollectors();
  LogCollectors(const LogCollectors&) = delete;
  LogCollectors& operator=(const LogCollectors&) = delete;

  void Sync(const std::vector<LauncherPod>& launcher_pods);
  // Newest metric line of any incarnation of the job.
  std::optional<WallTime> LastProgress(const std::string& job_key) const;
  std::map<std::string, LogCounts> Counts() const;
  size_t Following() const;  // collectors whose log has not ended
  // Whether the collector of the launcher pod with this uid has read its log to the end and
  // published the last throughput: nullopt when no collector follows that pod.
  std::optional<bool> Ended(const std::string& launcher_uid) const;
  void StopAll();

 private:
  using Steady = std::chrono::steady_clock;
  struct Entry {
    enum class Where { kQueued, kRunning, kTimer, kPolling, kDone };
    uint64_t id = 0;
    std::string job_key;
    std::string pod;  // its name, for messages
    std::unique_ptr<LogCollector> collector;
    Where where = Where::kQueued;
    // While kTimer or kPolling: when to step it whatever its stream says (max: never).
    Steady::time_point deadline = Steady::time_point::max();
    // The time of its one live entry in timers_ (max: none). The heap holds at most one live
    // entry per collector however often its deadline moves: a later deadline is pushed only
    // when the entry before it comes up.
    Steady::time_point heap_at = Steady::time_point::max();
    int polled_fd = -1;  // registered with the poller while kPolling
    int flushes = 0;     // Flush() calls queued or running
    // Stop() was called: its next step is due at once, whatever the step running when Stop()
    // came says it waits for (that step may not have seen the stop).
    bool stopping = false;
  };
  struct Task {
    Entry* entry;
    bool flush;  // Flush(), not Step()
  };
  struct Timer {
    Steady::time_point at;
    uint64_t id;
    bool operator>(const Timer& o) const { return at > o.at; }
  };

  void SyncEntries(const std::vector<LauncherPod>& launcher_pods);
  // Routes an entry by what its Step() returned.
  void RouteLocked(Entry& e, const CollectorWait& wait) REQUIRES(mu_);
  void QueueLocked(Entry& e) REQUIRES(mu_);
  // Takes the entry out of its timer or the poll set and queues it, so a Stop() is acted on now.
  void KickLocked(Entry& e) REQUIRES(mu_);
  // Stops the collector: kicked now if it waits, queued again at once if a step is running.
  void StopLocked(Entry& e) REQUIRES(mu_);
  // Out of the poll set and the timers, for a step now.
  void UnpollLocked(Entry& e) REQUIRES(mu_);
  void WakePoller();
  void PollLoop();
  void WorkLoop();
  void Finished(Entry& e, const Status& status);
  // Adds a finished entry's counts to the job's totals.
  void FoldLocked(const Entry& entry) REQUIRES(mu_);
  void EraseLocked(const std::string& uid) REQUIRES(mu_);

  LogOpener open_;
  ThroughputSink& sink_;
  const LogCollectorOptions options_;
  const int epoll_fd_;
  const int wake_fd_;  // an eventfd in the poll set
  mutable Mutex mu_;
  std::condition_variable_any work_cv_;  // a task was queued, or shutting down
  std::condition_variable_any idle_cv_;  // an entry finished, or a flush did
  std::map<std::string, std::unique_ptr<Entry>> by_uid_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Entry*> by_id_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::deque<Task> tasks_ GUARDED_BY(mu_);
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_ GUARDED_BY(mu_);
  Steady::time_point poller_wakes_at_ GUARDED_BY(mu_) = Steady::time_point::max();
  bool shutting_down_ GUARDED_BY(mu_) = false;
  std::multimap<std::string, std::string> uids_of_job_ GUARDED_BY(mu_);  // job key → by_uid_ key
  std::map<std::string, LogCounts> folded_ GUARDED_BY(mu_);
  std::map<std::string, WallTime> folded_progress_ GUARDED_BY(mu_);
  std::vector<std::jthread> threads_;  // the poller, then the workers; last: joined first
};

}  // namespace dljob::metrics
