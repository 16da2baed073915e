// Observation: what a job's pods say about the job, derived fresh on every reconcile.
//
// The operator never trusts a stored phase; it looks at the pods it owns and reads off where the
// job stands. Observe() is that reading — a pure function of the job and its pods (as the API
// server returns them) — and the reconciler turns it into status and actions (create, restart,
// clean up). Thread-safe.
#pragma once

#include <optional>
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

// A worker that went away after its gang was bound.
struct LostWorker {
  std::string pod;
  std::string message;  // for a person: which pod and what is known of why
  // Absent from `pods` (rather than being deleted): a cache that is behind the pods this
  // operator just made looks the same, so the caller asks the server before acting on it.
  bool missing = false;
};

// The first worker (by index) of a job whose gang was bound in this incarnation that `pods` lack
// (deleted, by a user, an eviction through the API or the pod garbage collector once its node was
// removed) or that is being deleted, its DisruptionTarget condition's reason and message when it
// has one. The gang was bound when job.status.placement is set (the reconciler sets it once every
// worker is bound and clears it on a restart or suspend) or the launcher exists; before that a
// missing worker is simply made again. nullopt when none is lost. `pods` are this incarnation's,
// as a cache has them: a worker missing from them is only a candidate (LostWorker::missing).
std::optional<LostWorker> FindLostWorker(const DLJob& job, const std::vector<nlohmann::json>& pods);

}  // namespace dljob::controller
