// See pod_logs.h.
#include "tests/apiserver/pod_logs.h"

namespace dljob::apiserver {

void PodLogs::Append(const std::string& pod_key, std::string_view text) {
  MutexLock lock(mu_);
  logs_[pod_key].append(text);
  changed_.notify_all();
}

void PodLogs::Erase(const std::string& pod_key) {
  MutexLock lock(mu_);
  logs_.erase(pod_key);
  changed_.notify_all();
}

std::string PodLogs::Read(const std::string& pod_key, size_t offset) const {
  MutexLock lock(mu_);
  auto it = logs_.find(pod_key);
  if (it == logs_.end() || offset >= it->second.size()) return "";
  return it->second.substr(offset);
}

void PodLogs::WaitForMore(const std::string& pod_key, size_t offset,
                          std::chrono::steady_clock::time_point deadline) const {
  MutexLock lock(mu_);
  const uint64_t wakes = wakes_;
  changed_.wait_until(mu_, deadline, [&]() REQUIRES(mu_) {
    auto it = logs_.find(pod_key);
    return wakes_ != wakes || (it != logs_.end() && it->second.size() > offset);
  });
}

void PodLogs::Wake() {
  MutexLock lock(mu_);
  ++wakes_;
  changed_.notify_all();
}

}  // namespace dljob::apiserver
