// EventRecorder: core/v1 Events about a DLJob, the lines `kubectl describe dljob` shows.
//
// One Event per status transition (and per problem reported, such as a stranger holding a
// child's name). Events are best effort, as in client-go: a failure to record one never fails
// a reconcile. Names are "<job>.<hex nanoseconds><n>", unique per recorder.
//
// Synchronous by default: Record() creates the Event before it returns (the reconciler's tests
// assert the calls in order). Asynchronous (`async`), as client-go's broadcaster is: Record()
// queues the Event and one thread of the recorder's own creates them in order, so a reconcile
// pass never waits for one; at most kMaxQueued wait, and more are dropped (and counted) while the
// server is slow. Destruction sends what is queued, then stops. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "jobs/dljob_types.h"
#include "kube/api.h"

namespace dljob::controller {

inline constexpr char kEventSource[] = "dljob-operator";

class EventRecorder {
 public:
  static constexpr size_t kMaxQueued = 4096;

  EventRecorder(kube::Api& api, const Clock& clock, bool async = false);
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // type: "Normal" or "Warning"; reason: CamelCase.
  void Record(const DLJob& job, const std::string& type, const std::string& reason,
              const std::string& message);
  // Async: blocks until every Event recorded so far was sent (or failed). Sync: returns at once.
  void Flush();
  // Events dropped because kMaxQueued were waiting.
  uint64_t Dropped() const;

  // The Event object Record() creates (pure given `name` and `now`); exposed for tests.
  static nlohmann::json NewEvent(const DLJob& job, const std::string& name, const std::string& type,
                                 const std::string& reason, const std::string& message,
                                 const std::string& now);

 private:
  struct Pending {
    std::string ns;
    nlohmann::json event;
  };
  void Send(const Pending& p);
  void SendQueued(std::stop_token stop);

  kube::Api& api_;
  const Clock& clock_;
  std::atomic<uint64_t> seq_{0};
  mutable Mutex mu_;
  std::condition_variable_any changed_;
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  uint64_t in_flight_ GUARDED_BY(mu_) = 0;
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  std::jthread sender_;  // last: it uses the members above; not started when synchronous
};

}  // namespace dljob::controller
