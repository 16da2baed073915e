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

void EventRecorder::Record(const DLJob& job, const std::string& type, const std::string& reason,
                           const std::string& message) {
  WallTime now = clock_.Now();
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, "%llx%llu", static_cast<unsigned long long>(nanos),
                static_cast<unsigned long long>(seq_++));
  std::string name = job.metadata.name + "." + suffix;
  // Best effort: the status already carries the same reason and message.
  (void)api_.Create(kube::resources::kEvents, job.metadata.namespace_,
                    NewEvent(job, name, type, reason, message, FormatRfc3339(now)));
}

}  // namespace dljob::controller
