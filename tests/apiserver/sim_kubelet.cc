// See sim_kubelet.h.
#include "tests/apiserver/sim_kubelet.h"

#include <map>
#include <optional>
#include <vector>

#include "kube/object_fields.h"
#include "tests/apiserver/sim_objects.h"
#include "tests/apiserver/watch_cursor.h"

namespace dljob::apiserver {
namespace {

using SteadyClock = std::chrono::steady_clock;

bool Terminating(const Json& pod) {
  return pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp") &&
         pod.contains("spec") && !pod["spec"].value("nodeName", "").empty();
}

// Running on a node and told to finish (sim_objects.h), not being deleted.
std::optional<int> ToldToFinish(const Json& pod) {
  std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
  if (phase != "Running" || Terminating(pod) || kube::NodeNameOf(pod).empty()) return std::nullopt;
  return ToldExitCode(pod);
}

bool BoundAndPending(const Json& pod) {
  std::string node = pod.contains("spec") ? pod["spec"].value("nodeName", "") : "";
  std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
  return !node.empty() && (phase.empty() || phase == "Pending");
}

}  // namespace

SimKubelet::SimKubelet(ObjectStore& store, ResourceType pods, std::function<std::string()> now,
                       bool graceful_deletion,
                       std::function<void(const std::string&, const std::string&)> finished)
    : store_(store),
      pods_(std::move(pods)),
      now_(std::move(now)),
      graceful_deletion_(graceful_deletion),
      finished_(std::move(finished)) {}

SimKubelet::~SimKubelet() { Disable(); }

void SimKubelet::Enable(std::chrono::milliseconds delay) {
  if (graceful_deletion_) store_.SetGracefulPodDeletion(true);
  MutexLock lock(mu_);
  delay_ = delay;
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void SimKubelet::Disable() {
  std::thread thread;
  {
    MutexLock lock(mu_);
    stop_ = true;
    thread = std::move(thread_);
  }
  store_.Interrupt();
  if (thread.joinable()) thread.join();
  store_.SetGracefulPodDeletion(false);
}

bool SimKubelet::enabled() const { return !stop_; }

std::chrono::milliseconds SimKubelet::delay() const {
  MutexLock lock(mu_);
  return delay_;
}

void SimKubelet::SetNodeDown(const std::string& node, bool down) {
  {
    MutexLock lock(mu_);
    if (down) {
      down_.insert(node);
    } else {
      down_.erase(node);
    }
  }
  store_.Interrupt();  // what waited for the node goes ahead
}

void SimKubelet::Run() {
  WatchFilter filter;
  filter.type = pods_;
  std::optional<WatchCursor> cursor;
  // Bound Pending pods to start: (ns, name) → (node, when).
  std::map<std::pair<std::string, std::string>, std::pair<std::string, SteadyClock::time_point>>
      due;
  // Pods being deleted gracefully: removed `delay` after the kubelet saw it: (ns, name) → (uid,
  // node, when).
  struct Stopping {
    std::string uid, node;
    SteadyClock::time_point at;
  };
  std::map<std::pair<std::string, std::string>, Stopping> stopping;
  // Running pods told to finish: (ns, name) → node.
  std::map<std::pair<std::string, std::string>, std::string> told;
  auto note = [&](const WatchOut& e) {
    auto key = std::make_pair(NamespaceOf(*e.object), NameOf(*e.object));
    const std::string node = kube::NodeNameOf(*e.object);
    if (e.type == "DELETED" || !BoundAndPending(*e.object)) {
      due.erase(key);
    } else if (!due.count(key)) {
      due[key] = {node, SteadyClock::now() + delay()};
    }
    if (e.type == "DELETED" || !ToldToFinish(*e.object)) {
      told.erase(key);
    } else {
      told[key] = node;
    }
    if (e.type == "DELETED" || !Terminating(*e.object)) {
      stopping.erase(key);
    } else if (!stopping.count(key)) {
      stopping[key] = {UidOf(*e.object), node, SteadyClock::now() + delay()};
    }
  };
  while (!stop_) {
    if (!cursor) {
      std::vector<WatchOut> initial;
      ApiResult<WatchCursor> started = WatchCursor::Start(store_, filter, "", &initial);
      if (!started.ok()) return;  // cannot happen for "": a broken invariant, stop quietly
      cursor.emplace(std::move(started).value());
      due.clear();
      told.clear();
      for (const WatchOut& e : initial) note(e);
    }
    ApiResult<std::vector<WatchOut>> events = cursor->Poll();
    if (!events.ok()) {  // compacted under us: start over from a fresh snapshot
      cursor.reset();
      continue;
    }
    for (const WatchOut& e : *events) note(e);
    std::set<std::string> down;
    {
      MutexLock lock(mu_);
      down = down_;
    }
    SteadyClock::time_point next = SteadyClock::now() + std::chrono::milliseconds(100);
    for (auto it = due.begin(); it != due.end();) {
      if (down.count(it->second.first)) {  // no kubelet there to start it
        ++it;
        continue;
      }
      if (it->second.second > SteadyClock::now()) {
        next = std::min(next, it->second.second);
        ++it;
        continue;
      }
      const auto& [ns, name] = it->first;
      store_.Mutate(pods_, ns, name, [&](Json& pod) -> std::optional<ApiError> {
        if (!BoundAndPending(pod)) return std::nullopt;
        PodState running;  // every other field at its default
        running.phase = "Running";
        ApplyPodState(pod, running, now_());
        return std::nullopt;
      });
      it = due.erase(it);
    }
    for (auto it = told.begin(); it != told.end();) {
      if (down.count(it->second)) {  // no kubelet there to see its containers end
        ++it;
        continue;
      }
      const auto& [ns, name] = it->first;
      bool ended = false;
      store_.Mutate(pods_, ns, name, [&](Json& pod) -> std::optional<ApiError> {
        if (std::optional<int> code = ToldToFinish(pod)) {
          ApplyPodState(pod, ToldState(pod, *code), now_());
          ended = true;
        }
        return std::nullopt;
      });
      if (ended && finished_) finished_(ns, name);
      it = told.erase(it);
    }
    for (auto it = stopping.begin(); it != stopping.end();) {
      if (down.count(it->second.node)) {  // no kubelet there to stop its containers
        ++it;
        continue;
      }
      if (it->second.at > SteadyClock::now()) {
        next = std::min(next, it->second.at);
        ++it;
        continue;
      }
      DeleteRequest containers_stopped;  // what a kubelet sends once the containers are gone
      containers_stopped.grace_period_seconds = 0;
      containers_stopped.precondition_uid = it->second.uid;
      store_.Delete(pods_, it->first.first, it->first.second, containers_stopped);
      it = stopping.erase(it);
    }
    if (!stop_) cursor->Wait(next);
  }
}

}  // namespace dljob::apiserver
