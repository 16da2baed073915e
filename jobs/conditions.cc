#include "jobs/conditions.h"

namespace dljob {

void SetCondition(DLJobStatus& status, const std::string& type, const std::string& status_value,
                  const std::string& reason, const std::string& message, const std::string& now) {
  for (Condition& c : status.conditions) {
    if (c.type != type) continue;
    if (c.status != status_value) c.last_transition_time = now;
    c.status = status_value;
    c.reason = reason;
    c.message = message;
    return;
  }
  status.conditions.push_back({type, status_value, reason, message, now});
}

void TransitionTo(DLJobStatus& status, JobPhase phase, const std::string& reason,
                  const std::string& message, const std::string& now) {
  status.phase = phase;
  std::string type = PhaseName(phase);
  for (Condition& c : status.conditions) {
    if (c.type != type && c.status == "True" && ParsePhase(c.type)) {  // phases only
      c.status = "False";
      c.last_transition_time = now;
    }
  }
  SetCondition(status, type, "True", reason, message, now);
  if (phase == JobPhase::kRunning && status.start_time.empty()) status.start_time = now;
  if (IsFinished(phase)) status.completion_time = now;
  if (phase == JobPhase::kRestarting) status.completion_time.clear();
}

const Condition* FindCondition(const DLJobStatus& status, const std::string& type) {
  for (const Condition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace dljob
