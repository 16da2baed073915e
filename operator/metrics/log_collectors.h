// LogCollectors: one LogCollector thread per launcher pod that has started, kept in step with the
// pods the operator sees.
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
// Sync() also flushes each running collector's unpublished throughput and archive lines
// (LogCollector::Flush).
// Sync() and StopAll() are called from one thread (the operator's loop); LastProgress(), Counts()
// and Following() from any. The destructor stops and joins every collector.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
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
  struct Entry {
    std::string job_key;
    std::unique_ptr<LogCollector> collector;
    std::jthread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void SyncEntries(const std::vector<LauncherPod>& launcher_pods);
  // Adds a finished entry's counts to the job's totals.
  void FoldLocked(const Entry& entry) REQUIRES(mu_);

  LogOpener open_;
  ThroughputSink& sink_;
  const LogCollectorOptions options_;
  mutable Mutex mu_;
  std::map<std::string, Entry> by_uid_ GUARDED_BY(mu_);
  std::multimap<std::string, std::string> uids_of_job_ GUARDED_BY(mu_);  // job key → by_uid_ key
  std::map<std::string, LogCounts> folded_ GUARDED_BY(mu_);
  std::map<std::string, WallTime> folded_progress_ GUARDED_BY(mu_);
};

}  // namespace dljob::metrics
