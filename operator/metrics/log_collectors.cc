// See log_collectors.h.
#include "operator/metrics/log_collectors.h"

#include <cstdio>
#include <set>

#include "base/json_fields.h"
#include "jobs/codec.h"
#include "kube/object_fields.h"

namespace dljob::metrics {
namespace {

using Json = nlohmann::json;

bool Started(const Json& pod) {
  const std::string phase = StringAt(FieldOf(pod, "status"), "phase");
  return phase == "Running" || phase == "Succeeded" || phase == "Failed";
}

// Whether the pod's launcher container has ended: the pod finished, or the container terminated.
bool LauncherEnded(const Json& pod) {
  const Json& status = FieldOf(pod, "status");
  const std::string phase = StringAt(status, "phase");
  if (phase == "Succeeded" || phase == "Failed") return true;
  const Json& containers = FieldOf(status, "containerStatuses");
  if (!containers.is_array()) return false;
  for (const Json& c : containers) {
    if (StringAt(c, "name") == "launcher")
      return FieldOf(FieldOf(c, "state"), "terminated").is_object();
  }
  return false;
}

}  // namespace

Status ApiThroughputSink::Publish(const std::string& ns, const std::string& job,
                                  const Throughput& throughput) {
  Json patch = {{"status", {{"throughput", EncodeThroughput(throughput)}}}};
  auto r = api_.MergePatch(kube::resources::kDLJobs, ns, job, patch, "status");
  if (!r.ok())
    return Status::Unavailable("cannot update the throughput of " + ns + "/" + job + ": " +
                               r.error().ToString());
  return Status::Ok();
}

LogCollectors::LogCollectors(LogOpener open, ThroughputSink& sink, LogCollectorOptions options)
    : open_(std::move(open)), sink_(sink), options_(std::move(options)) {}

LogCollectors::~LogCollectors() { StopAll(); }

void LogCollectors::Sync(const Pods& launcher_pods) {
  SyncEntries(launcher_pods);
  // Throughput that went quiet still reaches the status. Outside the lock: publishing is an API
  // call. The entries stay: only Sync() and StopAll() remove them, on this same thread.
  std::vector<LogCollector*> active;
  {
    MutexLock lock(mu_);
    for (auto& [uid, e] : by_uid_) {
      if (!e.done->load()) active.push_back(e.collector.get());
    }
  }
  for (LogCollector* c : active) c->Flush();
}

void LogCollectors::SyncEntries(const Pods& launcher_pods) {
  std::set<std::string> present;
  MutexLock lock(mu_);
  for (const std::shared_ptr<const Json>& shared : launcher_pods) {
    const Json& pod = *shared;
    const std::string uid = kube::UidOf(pod);
    const std::string ns = kube::NamespaceOf(pod);
    const std::string name = kube::NameOf(pod);
    const std::string job = kube::LabelOf(pod, "dljob.io/job-name");
    if (uid.empty() || job.empty()) continue;
    present.insert(uid);
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) {
      if (LauncherEnded(pod)) it->second.collector->ContainerEnded();
      continue;
    }
    if (!Started(pod)) continue;
    Entry& e = by_uid_[uid];
    e.job_key = ns + "/" + job;
    uids_of_job_.emplace(e.job_key, uid);
    ArchivedPod archived{name, uid,
                         pod.value("/metadata/creationTimestamp"_json_pointer, std::string())};
    e.collector =
        std::make_unique<LogCollector>(ns, job, std::move(archived), open_, sink_, options_);
    if (LauncherEnded(pod)) e.collector->ContainerEnded();
    e.done = std::make_shared<std::atomic<bool>>(false);
    e.thread = std::jthread(
        [c = e.collector.get(), done = e.done, key = e.job_key, name](std::stop_token stop) {
          Status s = c->Run(stop);
          if (!s.ok())
            std::fprintf(stderr, "dljob-operator: log of %s (pod %s): %s\n", key.c_str(),
                         name.c_str(), s.message().c_str());
          done->store(true);
        });
  }
  for (auto it = by_uid_.begin(); it != by_uid_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    it->second.thread.request_stop();
    it->second.thread.join();
    FoldLocked(it->second);
    auto [first, last] = uids_of_job_.equal_range(it->second.job_key);
    for (auto u = first; u != last; ++u) {
      if (u->second == it->first) {
        uids_of_job_.erase(u);
        break;
      }
    }
    it = by_uid_.erase(it);
  }
}

void LogCollectors::FoldLocked(const Entry& entry) {
  LogCounts& c = folded_[entry.job_key];
  c.lines += entry.collector->lines();
  c.metric_lines += entry.collector->metric_lines();
  if (auto t = entry.collector->LastProgress()) {
    auto [it, fresh] = folded_progress_.emplace(entry.job_key, *t);
    if (!fresh && *t > it->second) it->second = *t;
  }
}

std::optional<WallTime> LogCollectors::LastProgress(const std::string& job_key) const {
  MutexLock lock(mu_);
  std::optional<WallTime> last;
  if (auto it = folded_progress_.find(job_key); it != folded_progress_.end()) last = it->second;
  auto [from, to] = uids_of_job_.equal_range(job_key);
  for (auto u = from; u != to; ++u) {
    const Entry& e = by_uid_.at(u->second);
    auto t = e.collector->LastProgress();
    if (t && (!last || *t > *last)) last = t;
  }
  return last;
}

std::map<std::string, LogCounts> LogCollectors::Counts() const {
  MutexLock lock(mu_);
  std::map<std::string, LogCounts> out = folded_;
  for (const auto& [uid, e] : by_uid_) {
    LogCounts& c = out[e.job_key];
    c.lines += e.collector->lines();
    c.metric_lines += e.collector->metric_lines();
  }
  return out;
}

size_t LogCollectors::Following() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [uid, e] : by_uid_) n += e.done->load() ? 0 : 1;
  return n;
}

std::optional<bool> LogCollectors::Ended(const std::string& launcher_uid) const {
  MutexLock lock(mu_);
  auto it = by_uid_.find(launcher_uid);
  if (it == by_uid_.end()) return std::nullopt;
  return it->second.done->load();
}

void LogCollectors::StopAll() {
  MutexLock lock(mu_);
  for (auto& [uid, e] : by_uid_) e.thread.request_stop();
  for (auto& [uid, e] : by_uid_) {
    if (e.thread.joinable()) e.thread.join();
    FoldLocked(e);
  }
  by_uid_.clear();
  uids_of_job_.clear();
}

}  // namespace dljob::metrics
