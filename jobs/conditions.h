// Status bookkeeping for a job's record: phases, conditions and times, as Kubernetes keeps them.
//
// Pure functions of (status, event, now), shared by every backend: the local supervisor calls
// them as its job moves (and the operator will, as it reconciles), so every transition leaves a
// condition whose reason and message a person can act on.
#pragma once

#include <string>

#include "jobs/dljob_types.h"

namespace dljob {

// Sets condition `type` to `status_value` with the reason and message. lastTransitionTime changes
// only when the status value does (as in Kubernetes).
void SetCondition(DLJobStatus& status, const std::string& type, const std::string& status_value,
                  const std::string& reason, const std::string& message, const std::string& now);

// Moves the job to `phase`: sets the phase, marks the phase's condition True and every other
// phase condition False (conditions of other types, e.g. Preempted, are left alone), and stamps
// startTime (first Running) or completionTime (finished).
void TransitionTo(DLJobStatus& status, JobPhase phase, const std::string& reason,
                  const std::string& message, const std::string& now);

// The condition of that type, or nullptr.
const Condition* FindCondition(const DLJobStatus& status, const std::string& type);

}  // namespace dljob
