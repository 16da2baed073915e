#include "operator/controller/events.h"

#include <cstdio>

namespace dljob::controller {

nlohmann::json EventRecorder::NewEvent(const DLJob& job, const std::string& name,
                                       const std::string& type, const std::string& reason,
                                       const std::string& message, const std::string& now) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", job.metadata.namespace_}}},
          {"involvedObject",
           {{"apiVersion", kApiVersion},
            {"kind", kKind},
            {"name", job.metadata.name},
            {"namespace", job.metadata.namespace_},
            {"uid", job.metadata.uid}}},
          {"type", type},
          {"reason", reason},
          {"message", message},
          {"source", {{"component", kEventSource}}},
          {"reportingComponent", kEventSource},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"count", 1}};
}

EventRecorder::EventRecorder(kube::Api& api, const Clock& clock, bool async)
    : api_(api), clock_(clock) {
  if (async) sender_ = std::jthread([this](std::stop_token stop) { SendQueued(stop); });
}

EventRecorder::~EventRecorder() {
  if (!sender_.joinable()) return;
  sender_.request_stop();
  {
    MutexLock lock(mu_);
    changed_.notify_all();
  }
  sender_.join();
}

void EventRecorder::Send(const Pending& p) {
  // Best effort: the status already carries the same reason and message.
  (void)api_.Create(kube::resources::kEvents, p.ns, p.event);
}

void EventRecorder::SendQueued(std::stop_token stop) {
  for (;;) {
    Pending next;
    {
      MutexLock lock(mu_);
      while (queue_.empty() && !stop.stop_requested()) changed_.wait(mu_);
      if (queue_.empty()) return;  // stopping, and everything queued was sent
      next = std::move(queue_.front());
      queue_.pop_front();
      ++in_flight_;
    }
    Send(next);
    MutexLock lock(mu_);
    --in_flight_;
    changed_.notify_all();
  }
}

void EventRecorder::Flush() {
  MutexLock lock(mu_);
  while (!queue_.empty() || in_flight_ > 0) changed_.wait(mu_);
}

uint64_t EventRecorder::Dropped() const {
  MutexLock lock(mu_);
  return dropped_;
}

void EventRecorder::Record(const DLJob& job, const std::string& type, const std::string& reason,
                           const std::string& message) {
  WallTime now = clock_.Now();
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, "%llx%llu", static_cast<unsigned long long>(nanos),
                static_cast<unsigned long long>(seq_++));
  std::string name = job.metadata.name + "." + suffix;
  Pending p{job.metadata.namespace_,
            NewEvent(job, name, type, reason, message, FormatRfc3339(now))};
  if (!sender_.joinable()) return Send(p);
  MutexLock lock(mu_);
  if (queue_.size() >= kMaxQueued) {
    ++dropped_;
    return;
  }
  queue_.push_back(std::move(p));
  changed_.notify_all();
}

}  // namespace dljob::controller
