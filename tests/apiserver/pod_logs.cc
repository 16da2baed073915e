// See pod_logs.h.
#include "tests/apiserver/pod_logs.h"

#include <algorithm>
#include <iterator>

#include "kube/log_timestamp.h"

namespace dljob::apiserver {

PodLogs::PodLogs(std::chrono::milliseconds delay) : delay_(delay) {}

size_t PodLogs::Arrived(const Log& log, Time now) {
  for (const auto& [begin, arrives] : log.in_flight) {
    if (arrives > now) return begin;
  }
  return log.text.size();
}

void PodLogs::Append(const std::string& pod_key, std::string_view text) {
  MutexLock lock(mu_);
  Log& log = logs_[pod_key];
  const Time now = std::chrono::steady_clock::now();
  while (!log.in_flight.empty() && log.in_flight.front().second <= now) log.in_flight.pop_front();
  if (delay_.count() > 0 && !text.empty())
    log.in_flight.emplace_back(log.text.size(), now + delay_);
  if (!text.empty()) log.written.emplace_back(log.text.size(), std::chrono::system_clock::now());
  log.text.append(text);
  NotifyLocked(pod_key);
}

void PodLogs::Erase(const std::string& pod_key) {
  MutexLock lock(mu_);
  logs_.erase(pod_key);
  NotifyLocked(pod_key);
}

void PodLogs::NotifyLocked(const std::string& pod_key) const {
  if (auto it = waiting_.find(pod_key); it != waiting_.end()) it->second->changed.notify_all();
}

std::string PodLogs::Read(const std::string& pod_key, size_t offset) const {
  MutexLock lock(mu_);
  auto it = logs_.find(pod_key);
  if (it == logs_.end()) return "";
  size_t end = Arrived(it->second, std::chrono::steady_clock::now());
  return offset >= end ? "" : it->second.text.substr(offset, end - offset);
}

std::string PodLogs::Stamped(const std::string& pod_key, size_t offset,
                             std::string_view text) const {
  MutexLock lock(mu_);
  auto it = logs_.find(pod_key);
  if (it == logs_.end()) return std::string(text);
  const Log& log = it->second;
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t at = offset + pos;
    if (at == 0 || log.text[at - 1] == '\n') {  // a line begins here
      auto after = std::upper_bound(log.written.begin(), log.written.end(), at,
                                    [](size_t a, const auto& w) { return a < w.first; });
      const auto time = after == log.written.begin() ? std::chrono::system_clock::time_point()
                                                     : std::prev(after)->second;
      out += kube::StampLogLine(time, "");
    }
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.append(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

bool PodLogs::Unread(const std::string& pod_key, size_t offset) const {
  MutexLock lock(mu_);
  auto it = logs_.find(pod_key);
  return it != logs_.end() && it->second.text.size() > offset;
}

void PodLogs::WaitForMore(const std::string& pod_key, size_t offset, Time deadline) const {
  MutexLock lock(mu_);
  const uint64_t wakes = wakes_;
  std::unique_ptr<Waiters>& slot = waiting_[pod_key];
  if (!slot) slot = std::make_unique<Waiters>();
  Waiters& waiters = *slot;  // the node stays while this call counts in it
  ++waiters.count;
  const uint64_t own_wakes = waiters.wakes;
  auto arrived_past_offset = [&]() REQUIRES(mu_) {
    auto it = logs_.find(pod_key);
    return it != logs_.end() && Arrived(it->second, std::chrono::steady_clock::now()) > offset;
  };
  while (wakes_ == wakes && waiters.wakes == own_wakes && !arrived_past_offset()) {
    const Time now = std::chrono::steady_clock::now();
    if (now >= deadline) return;
    // Text on its way arrives without a notification: wake up at the next arrival too.
    Time until = deadline;
    if (auto it = logs_.find(pod_key); it != logs_.end()) {
      for (const auto& [begin, arrives] : it->second.in_flight) {
        if (arrives > now) {
          until = std::min(until, arrives);
          break;
        }
      }
    }
    waiters.changed.wait_until(mu_, until);
  }
  if (--waiters.count == 0) waiting_.erase(pod_key);
}

void PodLogs::Wake() {
  MutexLock lock(mu_);
  ++wakes_;
  for (const auto& [key, waiters] : waiting_) waiters->changed.notify_all();
}

void PodLogs::Wake(const std::string& pod_key) {
  MutexLock lock(mu_);
  if (auto it = waiting_.find(pod_key); it != waiting_.end()) {
    ++it->second->wakes;
    it->second->changed.notify_all();
  }
}

std::string TailLines(const std::string& text, int64_t n) {
  if (n < 0) return text;
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  for (int64_t i = 0; i < n; ++i) {
    size_t nl = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    pos = nl;
  }
  return n == 0 ? "" : text.substr(pos + 1);
}

}  // namespace dljob::apiserver
