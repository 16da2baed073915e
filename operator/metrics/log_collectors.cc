// See log_collectors.h.
#include "operator/metrics/log_collectors.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

LogCollectors::LogCollectors(LogOpener open, ThroughputSink& sink, LogCollectorOptions options)
    : open_(std::move(open)),
      sink_(sink),
      options_(std::move(options)),
      epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    std::fprintf(stderr, "dljob-operator: cannot follow launcher logs: epoll/eventfd: %s\n",
                 std::strerror(errno));
    std::abort();  // out of file descriptors at start: nothing sensible to go on with
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;  // no entry has id 0
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  threads_.emplace_back([this] { PollLoop(); });
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] { WorkLoop(); });
  }
}

LogCollectors::~LogCollectors() {
  StopAll();
  {
    MutexLock lock(mu_);
    shutting_down_ = true;
  }
  work_cv_.notify_all();
  WakePoller();
  for (std::jthread& t : threads_) t.join();
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void LogCollectors::WakePoller() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void LogCollectors::QueueLocked(Entry& e) {
  e.where = Entry::Where::kQueued;
  tasks_.push_back({&e, false});
  work_cv_.notify_one();
}

void LogCollectors::UnpollLocked(Entry& e) {
  e.deadline = Steady::time_point::max();
  if (e.polled_fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, e.polled_fd, nullptr);
    e.polled_fd = -1;
  }
}

void LogCollectors::KickLocked(Entry& e) {
  if (e.where != Entry::Where::kTimer && e.where != Entry::Where::kPolling) return;
  UnpollLocked(e);
  QueueLocked(e);
}

void LogCollectors::StopLocked(Entry& e) {
  e.stopping = true;
  e.collector->Stop();
  KickLocked(e);
}

void LogCollectors::RouteLocked(Entry& e, const CollectorWait& wait) {
  if (wait.flush && e.flushes == 0) {
    ++e.flushes;
    tasks_.push_back({&e, true});
    work_cv_.notify_one();
  }
  const Steady::time_point now = Steady::now();
  Steady::time_point timer = Steady::time_point::max();
  switch (wait.kind) {
    case CollectorWait::Kind::kDone:
      e.where = Entry::Where::kDone;
      idle_cv_.notify_all();
      return;
    case CollectorWait::Kind::kCall:
      if (wait.not_before <= now || e.stopping) {
        QueueLocked(e);
        return;
      }
      e.where = Entry::Where::kTimer;
      timer = wait.not_before;
      break;
    case CollectorWait::Kind::kStream:
      if (e.stopping) {
        QueueLocked(e);
        return;
      }
      e.where = Entry::Where::kPolling;
      timer = wait.ready.until;
      if (wait.ready.fd >= 0) {
        epoll_event ev{};
        ev.events = wait.ready.events & POLLOUT ? EPOLLOUT : EPOLLIN;
        ev.data.u64 = e.id;
        if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wait.ready.fd, &ev) == 0) {
          e.polled_fd = wait.ready.fd;
        } else {
          timer = now;  // cannot wait on it: try again at once rather than never
        }
      }
      break;
  }
  e.deadline = timer;
  if (timer >= e.heap_at) return;  // the poller looks at the entry by then anyway
  timers_.push({timer, e.id});
  e.heap_at = timer;
  if (timer < poller_wakes_at_) {
    poller_wakes_at_ = timer;
    WakePoller();
  }
}

void LogCollectors::PollLoop() {
  std::vector<epoll_event> events(256);
  std::vector<Entry*> ready;
  while (true) {
    int timeout_ms;
    {
      MutexLock lock(mu_);
      if (shutting_down_) return;
      poller_wakes_at_ = timers_.empty() ? Steady::time_point::max() : timers_.top().at;
      auto left =
          timers_.empty()
              ? std::chrono::milliseconds(60'000)
              : std::chrono::ceil<std::chrono::milliseconds>(poller_wakes_at_ - Steady::now());
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
    }
    const int n =
        ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
    ready.clear();
    {
      MutexLock lock(mu_);
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == 0) {
          uint64_t count;
          (void)!::read(wake_fd_, &count, sizeof count);
          continue;
        }
        auto it = by_id_.find(id);
        if (it == by_id_.end() || it->second->where != Entry::Where::kPolling) continue;
        Entry& e = *it->second;
        UnpollLocked(e);
        e.where = Entry::Where::kRunning;
        ready.push_back(&e);
      }
      const Steady::time_point now = Steady::now();
      while (!timers_.empty() && timers_.top().at <= now) {
        const Timer t = timers_.top();
        timers_.pop();
        auto it = by_id_.find(t.id);
        if (it == by_id_.end() || it->second->heap_at != t.at) continue;  // superseded
        Entry& e = *it->second;
        e.heap_at = Steady::time_point::max();
        if (e.where != Entry::Where::kTimer && e.where != Entry::Where::kPolling) continue;
        if (e.deadline > now) {  // moved on since this entry was pushed
          if (e.deadline != Steady::time_point::max()) {
            timers_.push({e.deadline, e.id});
            e.heap_at = e.deadline;
          }
          continue;
        }
        UnpollLocked(e);
        if (e.where == Entry::Where::kTimer) {
          QueueLocked(e);  // a step that calls out: for a worker
        } else if (e.where == Entry::Where::kPolling) {
          e.where = Entry::Where::kRunning;
          ready.push_back(&e);
        }
      }
    }
    // Reading steps never wait: run here, one after another.
    for (Entry* e : ready) {
      CollectorWait wait = e->collector->Step();
      if (wait.kind == CollectorWait::Kind::kDone) Finished(*e, e->collector->result());
      MutexLock lock(mu_);
      RouteLocked(*e, wait);
    }
  }
}

void LogCollectors::WorkLoop() {
  while (true) {
    Task task;
    {
      MutexLock lock(mu_);
      while (tasks_.empty() && !shutting_down_) work_cv_.wait(mu_);
      if (tasks_.empty()) return;
      task = tasks_.front();
      tasks_.pop_front();
      if (!task.flush) task.entry->where = Entry::Where::kRunning;
    }
    Entry& e = *task.entry;
    if (task.flush) {
      e.collector->Flush();
      MutexLock lock(mu_);
      --e.flushes;
      idle_cv_.notify_all();
      continue;
    }
    CollectorWait wait = e.collector->Step();
    if (wait.kind == CollectorWait::Kind::kDone) Finished(e, e.collector->result());
    MutexLock lock(mu_);
    RouteLocked(e, wait);
  }
}

void LogCollectors::Finished(Entry& e, const Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "dljob-operator: log of %s (pod %s): %s\n", e.job_key.c_str(), e.pod.c_str(),
               status.message().c_str());
}

void LogCollectors::Sync(const std::vector<LauncherPod>& launcher_pods) {
  SyncEntries(launcher_pods);
  // Throughput that went quiet still reaches the status, and archived lines their store: each
  // running collector's due flush goes to a worker (publishing is an API call).
  MutexLock lock(mu_);
  for (auto& [uid, e] : by_uid_) {
    if (e->where == Entry::Where::kDone || e->flushes > 0 || !e->collector->FlushDue()) continue;
    ++e->flushes;
    tasks_.push_back({e.get(), true});
    work_cv_.notify_one();
  }
}

void LogCollectors::SyncEntries(const std::vector<LauncherPod>& launcher_pods) {
  std::set<std::string> present;
  MutexLock lock(mu_);
  for (const LauncherPod& pod : launcher_pods) {
    if (pod.uid.empty() || pod.job.empty()) continue;
    present.insert(pod.uid);
    if (auto it = by_uid_.find(pod.uid); it != by_uid_.end()) {
      if (pod.ended) it->second->collector->ContainerEnded();
      continue;
    }
    if (!pod.started) continue;
    auto e = std::make_unique<Entry>();
    e->id = next_id_++;
    e->job_key = pod.ns + "/" + pod.job;
    e->pod = pod.name;
    ArchivedPod archived{pod.name, pod.uid, pod.created};
    e->collector = std::make_unique<LogCollector>(pod.ns, pod.job, std::move(archived), open_,
                                                  sink_, options_);
    if (pod.ended) e->collector->ContainerEnded();
    uids_of_job_.emplace(e->job_key, pod.uid);
    by_id_[e->id] = e.get();
    Entry& entry = *e;
    by_uid_[pod.uid] = std::move(e);
    QueueLocked(entry);
  }
  // Pods that are gone: their collectors finish (a last publish and archive write), then go.
  std::vector<std::string> gone;
  for (auto& [uid, e] : by_uid_) {
    if (present.count(uid)) continue;
    StopLocked(*e);
    gone.push_back(uid);
  }
  for (const std::string& uid : gone) {
    Entry& e = *by_uid_.at(uid);
    while (e.where != Entry::Where::kDone || e.flushes > 0) idle_cv_.wait(mu_);
    FoldLocked(e);
    EraseLocked(uid);
  }
}

void LogCollectors::EraseLocked(const std::string& uid) {
  auto it = by_uid_.find(uid);
  const Entry& e = *it->second;
  auto [first, last] = uids_of_job_.equal_range(e.job_key);
  for (auto u = first; u != last; ++u) {
    if (u->second == uid) {
      uids_of_job_.erase(u);
      break;
    }
  }
  by_id_.erase(e.id);
  by_uid_.erase(it);
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
    const Entry& e = *by_uid_.at(u->second);
    auto t = e.collector->LastProgress();
    if (t && (!last || *t > *last)) last = t;
  }
  return last;
}

std::map<std::string, LogCounts> LogCollectors::Counts() const {
  MutexLock lock(mu_);
  std::map<std::string, LogCounts> out = folded_;
  for (const auto& [uid, e] : by_uid_) {
    LogCounts& c = out[e->job_key];
    c.lines += e->collector->lines();
    c.metric_lines += e->collector->metric_lines();
  }
  return out;
}

size_t LogCollectors::Following() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [uid, e] : by_uid_) n += e->where == Entry::Where::kDone ? 0 : 1;
  return n;
}

std::optional<bool> LogCollectors::Ended(const std::string& launcher_uid) const {
  MutexLock lock(mu_);
  auto it = by_uid_.find(launcher_uid);
  if (it == by_uid_.end()) return std::nullopt;
  return it->second->where == Entry::Where::kDone;
}

void LogCollectors::StopAll() {
  MutexLock lock(mu_);
  for (auto& [uid, e] : by_uid_) StopLocked(*e);
  for (auto& [uid, e] : by_uid_) {
    while (e->where != Entry::Where::kDone || e->flushes > 0) idle_cv_.wait(mu_);
    FoldLocked(*e);
  }
  by_uid_.clear();
  by_id_.clear();
  uids_of_job_.clear();
}

}  // namespace dljob::metrics
