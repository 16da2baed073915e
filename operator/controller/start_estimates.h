// The operator's side of start-time estimates (scheduler/queue/start_estimate.h): what a queue
// pass's snapshot tells the estimator about each running job's end. A running job ends
// (ExpectedEndOf) when its progress says (status.throughput's step of totalSteps, at the step rate
// StepRates has reckoned from the reports seen so far), else at its start plus
// runPolicy.activeDeadlineSeconds, else at an unknown time. Waiting jobs are expected to run to
// their time limit (or an unknown time without one). Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "operator/controller/queue_snapshot.h"
#include "operator/controller/step_rates.h"
#include "scheduler/queue/start_estimate.h"

namespace dljob::controller {

// Records the progress of every running job of `jobs` in `rates`, and forgets the others.
void ObserveProgress(const std::vector<QueuedJobPtr>& jobs, StepRates& rates);

// The estimator's jobs: `snapshot`'s, each running one with its expected end. `jobs` are the
// queued jobs the snapshot was built from.
std::vector<scheduler::EstimateJob> EstimateInputs(const QueueSnapshot& snapshot,
                                                   const std::vector<QueuedJobPtr>& jobs,
                                                   const StepRates& rates);

// The estimates by job key.
std::map<std::string, scheduler::StartEstimate> ByJob(const scheduler::StartEstimates& estimates);

}  // namespace dljob::controller
