// JobTimings: what one status write says about how long a job waited, for the operator's
// histograms (operator/metrics JobTimingHistograms). Pure; thread-safe.
//
//   start_seconds       creation (metadata.creationTimestamp) → the first Running phase: the
//                       write that takes a job Running for the first time (no Running condition
//                       before it; a resume after a preemption or a restart is not a start)
//   queue_wait_seconds  entering the queue → admitted: the write that takes a job from Queued
//                       (or from no phase at all) to Scheduled or Running, measured from when it
//                       became Queued (its Queued condition's lastTransitionTime; creation when
//                       it never showed Queued). Every admission counts, again after a preemption.
//
// The reconciler calls its JobTimingsSink after each status write that lands, so only the leader
// observes, and a transition is counted once: its write succeeds once (a stale one is a 409).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/clock.h"
#include "jobs/dljob_types.h"

namespace dljob::controller {

struct JobTimings {
  std::optional<double> start_seconds;
  std::optional<double> queue_wait_seconds;

  bool empty() const { return !start_seconds && !queue_wait_seconds; }
};

// `before` and `after` are the job's status as read and as written at `now`; `created` its
// creationTimestamp (RFC 3339; nothing is measured without it). Negative spans (clock skew
// between the server and the operator) count as 0.
JobTimings TimingsOf(const std::string& created, const DLJobStatus& before,
                     const DLJobStatus& after, WallTime now);

// Receives the timings of a written status, with the job (defaulted) they are about.
using JobTimingsSink = std::function<void(const DLJob& job, const JobTimings& timings)>;

}  // namespace dljob::controller
