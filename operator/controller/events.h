// EventRecorder: core/v1 Events about a DLJob, the lines `kubectl describe dljob` shows.
//
// One Event per status transition (and per problem reported, such as a stranger holding a
// child's name). Events are best effort, as in client-go: a failure to record one never fails
// a reconcile. Names are "<job>.<hex nanoseconds><n>", unique per recorder. Thread-safe.
#pragma once

#include <atomic>
#include <string>

#include "base/clock.h"
#include "jobs/dljob_types.h"
#include "kube/api.h"

namespace dljob::controller {

inline constexpr char kEventSource[] = "dljob-operator";

class EventRecorder {
 public:
  EventRecorder(kube::Api& api, const Clock& clock) : api_(api), clock_(clock) {}

  // type: "Normal" or "Warning"; reason: CamelCase.
  void Record(const DLJob& job, const std::string& type, const std::string& reason,
              const std::string& message);

  // The Event object Record() creates (pure given `name` and `now`); exposed for tests.
  static nlohmann::json NewEvent(const DLJob& job, const std::string& name, const std::string& type,
                                 const std::string& reason, const std::string& message,
                                 const std::string& now);

 private:
  kube::Api& api_;
  const Clock& clock_;
  std::atomic<uint64_t> seq_{0};
};

}  // namespace dljob::controller
