// See log_collectors.h.
#include "operator/metrics/log_collectors.h"

#include <cstdio>
#include <set>

#include "base/json_fields.h"
#include "jobs/codec.h"
#include "kube/object_fields.h"

namespace dljob::metrics {
using Json = nlohmann::json;

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

LauncherPod LauncherPodOf(const Json& pod) {
  LauncherPod p{kube::NamespaceOf(pod), kube::NameOf(pod), kube::UidOf(pod),
                kube::LabelOf(pod, "dljob.io/job-name"),
                StringAt(FieldOf(pod, "metadata"), "creationTimestamp")};
  const Json& status = FieldOf(pod, "status");
  const std::string phase = StringAt(status, "phase");
  p.started = phase == "Running" || phase == "Succeeded" || phase == "Failed";
  p.ended = phase == "Succeeded" || phase == "Failed";
  if (const Json& containers = FieldOf(status, "containerStatuses"); containers.is_array()) {
    for (const Json& c : containers) {
      if (StringAt(c, "name") == "launcher") {
        p.ended = p.ended || FieldOf(FieldOf(c, "state"), "terminated").is_object();
        break;
      }
    }
  }
  return p;
}

void LauncherPodSet::Upsert(const Json& pod) {
  LauncherPod p = LauncherPodOf(pod);
  std::string key = kube::ObjectKey(p.ns, p.name);
  MutexLock lock(mu_);
  by_key_[std::move(key)] = std::move(p);
}

void LauncherPodSet::Remove(const std::string& key) {
  MutexLock lock(mu_);
  by_key_.erase(key);
}

std::vector<LauncherPod> LauncherPodSet::All() const {
  MutexLock lock(mu_);
  std::vector<LauncherPod> out;
  out.reserve(by_key_.size());
  for (const auto& [key, pod] : by_key_) out.push_back(pod);
  return out;
}

LogCollectors::~LogCollectors() { StopAll(); }

void LogCollectors::Sync(const std::vector<LauncherPod>& launcher_pods) {
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

void LogCollectors::SyncEntries(const std::vector<LauncherPod>& launcher_pods) {
  std::set<std::string> present;
  MutexLock lock(mu_);
  for (const LauncherPod& pod : launcher_pods) {
    if (pod.uid.empty() || pod.job.empty()) continue;
    present.insert(pod.uid);
    if (auto it = by_uid_.find(pod.uid); it != by_uid_.end()) {
      if (pod.ended) it->second.collector->ContainerEnded();
      continue;
    }
    if (!pod.started) continue;
    Entry& e = by_uid_[pod.uid];
    e.job_key = pod.ns + "/" + pod.job;
    uids_of_job_.emplace(e.job_key, pod.uid);
    ArchivedPod archived{pod.name, pod.uid, pod.created};
    e.collector = std::make_unique<LogCollector>(pod.ns, pod.job, std::move(archived), open_, sink_,
                                                 options_);
    if (pod.ended) e.collector->ContainerEnded();
    e.done = std::make_shared<std::atomic<bool>>(false);
    e.thread = std::jthread([c = e.collector.get(), done = e.done, key = e.job_key,
                             name = pod.name](std::stop_token stop) {
      Status s = c->Run(stop);
      if (!s.ok())
        std::fprintf(stderr, "dljob-operator: log of %s (pod %s): %s\n", key.c_str(), name.c_str(),
                     s.message().c_str());
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
