// See pod_logs.h.
#include "tests/apiserver/pod_logs.h"

namespace dljob::apiserver {

void PodLogs::Append(const std::string& pod_key, std::string_view text) {
  std::lock_guard<std::mutex> lock(mu_);
  logs_[pod_key].append(text);
  changed_.notify_all();
}

void PodLogs::Erase(const std::string& pod_key) {
  std::lock_guard<std::mutex> lock(mu_);
  logs_.erase(pod_key);
  changed_.notify_all();
}

std::string PodLogs::Read(const std::string& pod_key, size_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = logs_.find(pod_key);
  if (it == logs_.end() || offset >= it->second.size()) return "";
  return it->second.substr(offset);
}

void PodLogs::WaitForMore(const std::string& pod_key, size_t offset,
                          std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t wakes = wakes_;
  changed_.wait_until(lock, deadline, [&] {
    auto it = logs_.find(pod_key);
    return wakes_ != wakes || (it != logs_.end() && it->second.size() > offset);
  });
}

void PodLogs::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  ++wakes_;
  changed_.notify_all();
}

}  // namespace dljob::apiserver
