// See pod_runner.h.
#include "tests/sim_nodes/pod_runner.h"

#include "base/time_format.h"
#include "kube/object_fields.h"

namespace dljob::sim_nodes {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::chrono::seconds kRetryDelay{1};

std::string StatusNow() { return FormatRfc3339(std::chrono::system_clock::now()); }

std::string KeyOf(const Json& pod) { return kube::NamespaceOf(pod) + "/" + kube::NameOf(pod); }

bool HasRunningContainers(const Json& pod) {
  if (!pod.contains("status")) return false;
  for (const Json& c : pod["status"].value("containerStatuses", Json::array())) {
    if (c.contains("state") && c["state"].contains("running")) return true;
  }
  return false;
}

}  // namespace

PodRunner::PodRunner(kube::Api& api, std::unordered_map<std::string, int> nodes, int threads,
                     Hooks hooks, std::string host_ip)
    : api_(api),
      nodes_(std::move(nodes)),
      threads_(std::max(1, threads)),
      hooks_(std::move(hooks)),
      host_ip_(std::move(host_ip)) {}

PodRunner::~PodRunner() { Stop(); }

void PodRunner::Start() {
  {
    MutexLock lock(mu_);
    stop_ = false;
  }
  for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { Worker(); });
  watcher_ = std::thread([this] { WatchLoop(); });
}

void PodRunner::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    if (stream_) stream_->Cancel();
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void PodRunner::WatchLoop() {
  kube::ListOptions options;
  options.field_selector = "spec.nodeName!=";
  std::string version;  // "" = list first
  auto stopping = [&] {
    MutexLock lock(mu_);
    return stop_;
  };
  auto pause = [&] {
    MutexLock lock(mu_);
    if (!stop_) wake_.wait_for(mu_, kRetryDelay);
  };
  while (!stopping()) {
    if (version.empty()) {
      kube::ApiResult<Json> list = kube::ListAll(api_, kube::resources::kPods, "", options);
      if (!list.ok()) {
        NoteFailure("listing pods", list.error());
        pause();
        continue;
      }
      for (Json& pod : (*list)["items"]) Offer(std::move(pod));
      version = (*list)["metadata"].value("resourceVersion", "");
    }
    kube::ListOptions watch = options;
    watch.resource_version = version;
    kube::ApiResult<kube::WatchStreamPtr> opened = api_.Watch(kube::resources::kPods, "", watch);
    if (!opened.ok()) {
      if (opened.error().IsGone()) version.clear();
      NoteFailure("watching pods", opened.error());
      pause();
      continue;
    }
    kube::WatchStreamPtr stream = std::move(opened).value();
    {
      MutexLock lock(mu_);
      if (stop_) break;
      stream_ = stream.get();
    }
    for (;;) {
      kube::ApiResult<std::optional<kube::WatchEvent>> event = stream->Next();
      if (!event.ok()) {
        if (event.error().IsGone()) {
          version.clear();
        } else if (!stopping()) {
          NoteFailure("watching pods", event.error());
        }
        break;
      }
      if (!event->has_value()) break;  // the server ended it: watch on from `version`
      kube::WatchEvent& e = **event;
      std::string rv = kube::ResourceVersionOf(e.object);
      if (!rv.empty()) version = rv;
      if (e.type == kube::WatchEvent::Type::kAdded || e.type == kube::WatchEvent::Type::kModified) {
        Offer(std::move(e.object));
      } else if (e.type == kube::WatchEvent::Type::kDeleted) {
        Forget(e.object);
      }
    }
    MutexLock lock(mu_);
    stream_ = nullptr;
  }
}

void PodRunner::Offer(Json pod) {
  if (!nodes_.count(kube::NodeNameOf(pod))) return;
  Key key = KeyOf(pod);
  {
    MutexLock lock(mu_);
    Entry& e = pods_[key];
    e.gone = false;
    if (e.done_uid != kube::UidOf(pod)) e.done = PodAction::Kind::kNone;  // a new incarnation
    e.pod = std::move(pod);
    if (e.busy) {
      e.dirty = true;
      return;
    }
    if (e.queued) return;
    e.queued = true;
    queue_.push_back(key);
  }
  wake_.notify_one();
}

void PodRunner::Forget(const Json& pod) {
  if (hooks_.removed && nodes_.count(kube::NodeNameOf(pod))) hooks_.removed(pod);
  MutexLock lock(mu_);
  auto it = pods_.find(KeyOf(pod));
  if (it == pods_.end()) return;
  if (it->second.busy || it->second.queued) {
    it->second.gone = true;
    return;
  }
  pods_.erase(it);
}

void PodRunner::Settle(const Key& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  Entry& e = it->second;
  e.busy = false;
  if (e.dirty) {
    e.dirty = false;
    e.queued = true;
    queue_.push_back(key);
    wake_.notify_one();
  } else if (e.gone) {
    pods_.erase(it);
  }
}

void PodRunner::Worker() {
  for (;;) {
    Key key;
    Json pod;
    {
      MutexLock lock(mu_);
      for (;;) {
        if (stop_) return;
        const SteadyClock::time_point now = SteadyClock::now();
        while (!retry_.empty() && retry_.begin()->first <= now) {
          Key k = retry_.begin()->second;
          retry_.erase(retry_.begin());
          auto it = pods_.find(k);
          if (it == pods_.end() || it->second.queued) continue;
          if (it->second.busy) {
            it->second.dirty = true;
            continue;
          }
          it->second.queued = true;
          queue_.push_back(k);
        }
        if (!queue_.empty()) break;
        if (retry_.empty()) {
          wake_.wait(mu_);
        } else {
          wake_.wait_until(mu_, retry_.begin()->first);
        }
      }
      key = std::move(queue_.front());
      queue_.pop_front();
      Entry& e = pods_[key];
      e.queued = false;
      e.busy = true;
      pod = e.pod;
      PodAction action = NextPodAction(pod);
      if (action.kind == PodAction::Kind::kNone ||
          (e.done == action.kind && e.done_uid == kube::UidOf(pod))) {
        Settle(key);
        continue;
      }
    }
    PodAction action = NextPodAction(pod);
    bool ok = Act(pod, action);
    MutexLock lock(mu_);
    Entry& e = pods_[key];
    if (ok) {
      e.done = action.kind;
      e.done_uid = kube::UidOf(pod);
    } else if (!e.gone) {
      retry_.emplace(SteadyClock::now() + kRetryDelay, key);
    }
    Settle(key);
  }
}

bool PodRunner::Act(const Json& pod, const PodAction& action) {
  const std::string ns = kube::NamespaceOf(pod);
  const std::string name = kube::NameOf(pod);
  auto patch_status = [&](const Json& patch, const char* what) {
    kube::ApiResult<Json> r = api_.MergePatch(kube::resources::kPods, ns, name, patch, "status");
    if (r.ok()) {
      ++updates_;
      return true;
    }
    if (r.error().IsNotFound()) return true;  // gone meanwhile: nothing left to do
    NoteFailure(std::string(what) + " pod " + ns + "/" + name, r.error());
    return false;
  };
  switch (action.kind) {
    case PodAction::Kind::kStart: {
      const std::string node = kube::NodeNameOf(pod);
      const int number = nodes_.at(node);
      unsigned slot;
      {
        MutexLock lock(mu_);
        slot = next_slot_[node]++;
      }
      const std::string host_ip = host_ip_.empty() ? NodeIp(number) : host_ip_;
      if (!patch_status(RunningStatusPatch(pod, PodIp(number, slot), host_ip, StatusNow()),
                        "starting")) {
        return false;
      }
      ++started_;
      if (hooks_.started) hooks_.started(pod);
      return true;
    }
    case PodAction::Kind::kFinish:
      if (!patch_status(FinishedStatusPatch(pod, action.exit_code, StatusNow()), "finishing")) {
        return false;
      }
      ++finished_;
      if (hooks_.finished) hooks_.finished(pod, action.exit_code);
      return true;
    case PodAction::Kind::kRemove: {
      if (HasRunningContainers(pod) &&
          !patch_status(StoppedStatusPatch(pod, StatusNow()), "stopping")) {
        return false;
      }
      kube::DeleteOptions options;
      options.grace_period_seconds = 0;
      options.precondition_uid = kube::UidOf(pod);
      kube::ApiResult<Json> gone = api_.Delete(kube::resources::kPods, ns, name, options);
      if (!gone.ok() && !gone.error().IsNotFound() && !gone.error().IsConflict()) {
        NoteFailure("deleting pod " + ns + "/" + name, gone.error());
        return false;
      }
      ++removed_;
      if (hooks_.removed) hooks_.removed(pod);
      return true;
    }
    case PodAction::Kind::kNone:
      return true;
  }
  return true;
}

void PodRunner::NoteFailure(const std::string& what, const kube::ApiError& error) {
  ++failures_;
  MutexLock lock(mu_);
  last_error_ = what + ": " + error.ToString();
}

PodRunner::Stats PodRunner::stats() const {
  Stats s;
  s.started = started_;
  s.finished = finished_;
  s.removed = removed_;
  s.status_updates = updates_;
  s.failures = failures_;
  MutexLock lock(mu_);
  s.queued = static_cast<long>(queue_.size());
  s.last_error = last_error_;
  return s;
}

}  // namespace dljob::sim_nodes
