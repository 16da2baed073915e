// The pods' logs the test API server serves at pods/{name}/log: text that tests append through
// /_test/pods/{ns}/{name}/log (or the simulated kubelet writes), kept per pod as "ns/name".
//
// Appended text reaches readers `delay` after it was appended (0: at once), as a real node's log
// pipeline (container runtime → log file → kubelet → API server) delivers a line a moment after
// the container wrote it — possibly after the API server already shows the container finished.
// Read() returns only the text that has arrived; Unread() says whether more is on its way, so a
// followed log of a finished pod ends only once everything has been sent, as a kubelet's does.
// A followed log waits for more text with WaitForMore, woken by an Append to its pod's log (not to
// another's: at ten thousand followed logs, waking every follower on every append was half of
// this server's CPU), by delayed text arriving and by Wake (a pod finished, the server shuts
// down, or only its own pod finished).
// Every append is stamped with the wall time it was made, so that the log can be served as a
// kubelet serves it with `timestamps=true` (Stamped).
// Thread-safe (one mutex).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"

namespace dljob::apiserver {

class PodLogs {
 public:
  explicit PodLogs(std::chrono::milliseconds delay = std::chrono::milliseconds(0));

  void Append(const std::string& pod_key, std::string_view text);
  void Erase(const std::string& pod_key);
  // The log from byte `offset` on, as far as it has reached readers ("" past that).
  std::string Read(const std::string& pod_key, size_t offset = 0) const;
  // `text`, read from byte `offset` of the log, with each line that begins in it prefixed with the
  // time of the append that wrote it (kube/log_timestamp.h's StampLogLine).
  std::string Stamped(const std::string& pod_key, size_t offset, std::string_view text) const;
  // Whether the log holds text past `offset`, arrived or still on its way.
  bool Unread(const std::string& pod_key, size_t offset) const;
  // Blocks until text past `offset` has arrived, Wake() is called, or `deadline`.
  void WaitForMore(const std::string& pod_key, size_t offset,
                   std::chrono::steady_clock::time_point deadline) const;
  // Wakes every follower (the server drops its streams) / the followers of one pod's log (it
  // finished).
  void Wake();
  void Wake(const std::string& pod_key);

 private:
  using Time = std::chrono::steady_clock::time_point;
  struct Log {
    std::string text;
    // Appends not yet arrived, oldest first: where each begins in `text`, and when it arrives.
    std::deque<std::pair<size_t, Time>> in_flight;
    // Where each append begins in `text`, and when it was made; in order.
    std::vector<std::pair<size_t, std::chrono::system_clock::time_point>> written;
  };
  // How much of the log has arrived by `now`.
  static size_t Arrived(const Log& log, Time now);

  // The followers waiting on one pod's log.
  struct Waiters {
    std::condition_variable_any changed;
    int count = 0;
    uint64_t wakes = 0;  // Wake(pod_key) calls while some follower waits
  };
  void NotifyLocked(const std::string& pod_key) const REQUIRES(mu_);

  const std::chrono::milliseconds delay_;
  mutable Mutex mu_;
  mutable std::map<std::string, std::unique_ptr<Waiters>> waiting_ GUARDED_BY(mu_);
  std::map<std::string, Log> logs_ GUARDED_BY(mu_);
  uint64_t wakes_ GUARDED_BY(mu_) = 0;
};

// The last `n` lines of `text` (all of it for n < 0), as tailLines serves them (log_serving.h).
std::string TailLines(const std::string& text, int64_t n);

}  // namespace dljob::apiserver
