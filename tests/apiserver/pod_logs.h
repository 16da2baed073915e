// The pods' logs the test API server serves at pods/{name}/log: text that tests append through
// /_test/pods/{ns}/{name}/log (or the simulated kubelet writes), kept per pod as "ns/name".
// A followed log waits for more text with WaitForMore, woken by Append and by Wake (a pod
// finished, the server shuts down).
// Thread-safe (one mutex).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <string>
#include <string_view>

#include "base/mutex.h"

namespace dljob::apiserver {

class PodLogs {
 public:
  void Append(const std::string& pod_key, std::string_view text);
  void Erase(const std::string& pod_key);
  // The log from byte `offset` on ("" past its end).
  std::string Read(const std::string& pod_key, size_t offset = 0) const;
  // Blocks until the log is longer than `offset`, Wake() is called, or `deadline`.
  void WaitForMore(const std::string& pod_key, size_t offset,
                   std::chrono::steady_clock::time_point deadline) const;
  void Wake();

 private:
  mutable Mutex mu_;
  mutable std::condition_variable_any changed_;
  std::map<std::string, std::string> logs_ GUARDED_BY(mu_);
  uint64_t wakes_ GUARDED_BY(mu_) = 0;
};

}  // namespace dljob::apiserver
