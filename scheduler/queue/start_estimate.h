// Start-time estimates: for every waiting job of a queue, when it is expected to start and the
// assumption that rests on ("when train-a ends in about 12 min, from its steps and images/sec";
// "after the reservation of big-job, when …"; "unknown: nothing running reports progress or has a
// time limit").
//
// How: a what-if replay of the queue's own plan. A JobQueue is built from the snapshot (as
// ScheduleSnapshot builds one), scheduled at `now`, and then, again and again, advanced to the
// next expected end of a running job (or the next time a pass may decide differently,
// Decision::next_change), which it finishes before the next pass — the same code that orders,
// reserves, backfills and preempts in the operator and in dljob-sim. A waiting job's estimate is
// the time of the first pass that starts it; its assumption names what made room then. Nothing
// arrives during the replay: a job submitted later with a higher priority, a job that ends early,
// a node added or lost — any of them makes the estimate wrong, so it is an estimate, never a
// promise, and callers re-estimate as things change.
//
// What the replay assumes of each job's run:
//   - a running job ends at its expected end (ExpectedEndOf): from its progress when it reports
//     some, else at its time limit (runPolicy.activeDeadlineSeconds), else never (unknown);
//   - a job the replay starts runs for its expected run time (a suspended job's remaining steps
//     at its step rate, when the caller knows them), cut at its time limit, or to its time limit;
//     without either it never ends in the replay;
//   - a job the replay suspends resumes with what it had left.
// An estimate's assumption names the end that made room (with the job whose reservation it waited
// behind, and the jobs it preempts, if any); its basis is that end's, weakened along the chain of
// jobs the replay started on the way (a job started at a time-limit guess ends on that guess too).
// It does not count every earlier end of the replay, so it says which kind of guess the estimate
// hangs on most directly, not that no other guess matters.
//
// A job that depends on a run with no expected end stays unknown, and so does one whose queue
// does not exist or which can never fit the nodes (the queue's own WaitCause at `now`).
//
// Cost: building the queue (O(jobs)), plus one pass per distinct end time until every waiting job
// has started, capped at EstimateOptions::max_passes passes (the jobs it has not started by then
// are unknown: "further ahead than the estimate looks"). A pass costs what an operator pass with
// QueueOptions::explain off costs; the first one explains (to find jobs that can never start).
// bench/estimate_bench measures a whole estimate against a plain pass for 1,000 and 5,000 waiting
// jobs.
//
// Pure: times are the caller's whole seconds (no clock is read). Deterministic: the same input,
// in any order, gives the same estimates. Thread-compatible; the placement policy is borrowed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/job_queue.h"
#include "scheduler/queue/queue_types.h"

namespace dljob::scheduler {

// What an expected end (and so an estimate) rests on, from firmest to weakest.
enum class EstimateBasis {
  kNow,        // nothing: the job starts now
  kProgress,   // a running job's steps and step rate
  kTimeLimit,  // a run lasting its whole time limit (runPolicy.activeDeadlineSeconds)
  kUnknown,    // no expected end at all
};

// "Now", "Progress", "TimeLimit", "Unknown": the values of status.startEstimate.basis
// (jobs/dljob_fields.h's kStartEstimateBases).
std::string_view EstimateBasisName(EstimateBasis basis);
// The weaker of two bases.
EstimateBasis Weaker(EstimateBasis a, EstimateBasis b);

struct ExpectedEnd {
  std::optional<int64_t> time;  // none: unknown
  EstimateBasis basis = EstimateBasis::kUnknown;
  bool operator==(const ExpectedEnd&) const = default;
};

// When a run that reported `step` of `total_steps` at `reported_at`, going at `steps_per_second`,
// reaches its last step (rounded up; `reported_at` when it already has). None when the rate is
// not a positive finite number or a count is negative. The operator derives the step rate from
// status.throughput (images/sec over the images of one step, or the step count's own rate).
std::optional<int64_t> EndFromProgress(int64_t step, int64_t total_steps, double steps_per_second,
                                       int64_t reported_at);

// A running job's expected end, the one rule for every caller: its progress end when it has one,
// else `start` + its time limit, else unknown. The time limit cuts a later progress end (the run
// is stopped there).
ExpectedEnd ExpectedEndOf(const JobRequest& job, int64_t start,
                          std::optional<int64_t> progress_end);

// One job of the snapshot.
struct EstimateJob {
  JobSnapshot job;  // running when it has a placement
  // Running: ExpectedEndOf the job (an end before `now` counts as due now). Unused when waiting.
  ExpectedEnd end;
  // Waiting: seconds it is expected to run once started, from progress (a suspended job's
  // remaining steps at its last step rate); none: until its time limit, else unknown.
  std::optional<int64_t> expected_run;
};

struct EstimateOptions {
  // Scheduling passes the replay may run after the one at `now`.
  int64_t max_passes = 20000;
};

struct StartEstimate {
  std::string job;
  std::optional<int64_t> time;  // none: unknown (the assumption says why)
  EstimateBasis basis = EstimateBasis::kUnknown;
  std::string assumption;  // e.g. "when train-a ends in about 12 min, from its steps and …"
  bool operator==(const StartEstimate&) const = default;
};

struct StartEstimates {
  std::vector<StartEstimate> jobs;  // every waiting job of the input, in the input's order
  int64_t passes = 0;               // scheduling passes replayed, the one at `now` included
  bool capped = false;              // max_passes stopped the replay with jobs not started
};

// The queue's error (kInvalidArgument, kAlreadyExists, naming the job) when the snapshot is not a
// valid queue, as ScheduleSnapshot's.
Result<StartEstimates> EstimateStarts(const std::vector<QueueSpec>& queues,
                                      const std::vector<EstimateJob>& jobs, std::vector<Node> nodes,
                                      int64_t now, const PlacementPolicy& policy,
                                      const QueueOptions& options,
                                      const EstimateOptions& estimate = {});

// "about 12 min", "about 2 h", "under a minute": how an assumption says a time from now.
std::string AboutDuration(int64_t seconds);

}  // namespace dljob::scheduler
