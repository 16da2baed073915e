// Observation: what a job's pods say about the job, derived fresh on every reconcile.
//
// The operator never trusts a stored phase; it looks at the pods it owns and reads off where the
// job stands. Observe() is that reading — a pure function of the job and its pods (as the API
// server returns them) — and the reconciler turns it into status and actions (create, restart,
// clean up). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"

namespace dljob::controller {

enum class JobState {
  kPending,    // not every worker exists or is bound yet
  kScheduled,  // every worker is bound to a node, not all are Ready
  kStarting,   // every worker is Ready; the launcher is missing or not running yet
  kRunning,    // the launcher runs
  kSucceeded,  // the launcher exited 0
  kFailed,     // the launcher or a worker failed (or was evicted)
};

const char* JobStateName(JobState state);

struct Observation {
  JobState state = JobState::kPending;
  WorkerCounts workers;
  std::vector<PlacementEntry> placement;  // node → GPUs of the workers bound so far
  std::string failed_pod;                 // the first failed pod, when kFailed
  std::string reason;                     // CamelCase, e.g. "WorkerFailed", "LauncherSucceeded"
  std::string message;                    // for a person: which pod, what happened
};

// `pods` are the job's pods (workers and launcher, told apart by the dljob.io/role label).
Observation Observe(const DLJob& job, const std::vector<nlohmann::json>& pods);

}  // namespace dljob::controller
