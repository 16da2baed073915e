// The figures dljob-sim reports for one policy's replay of a trace.
//
//   jct             job completion time: finish − submit, over the jobs that finished
//   wait            the time a finished job spent pending: JCT − time it held GPUs (its first
//                   start − submit, plus the time it waited after each suspension)
//   makespan        the last finish − the first submit
//   gpu_allocation  ∫ allocated GPUs dt / (total GPUs × ∫ dt), over the time some job was
//                   pending or running (restoring after a suspension counts as allocated); a
//                   trace's long tail (a few days-long jobs running alone) dilutes it, so also
//   gpu_allocation_queued  the same over the time some job was pending: how much of the cluster
//                   was in use while work waited
//   fragmentation   the time-weighted mean, while the head job waited for room with GPUs free, of
//                   the fraction of the free GPUs (of the head's GPU model) that sat on nodes with
//                   fewer free than one of its workers needs: free, but of no use to it
// With start-time estimates (SimPolicy::estimates), over the estimates made before each job's
// first start, of jobs that started (EstimateAccuracy), for every estimate (at submission and at
// each change) and for each job's first alone:
//   error           |estimate − first start|: its median and p90
//   within 25%      the share whose error is at most a quarter of the wait left when it was made
//                   (first start − the time it was made)
//   bias            the median of estimate − first start (positive: the job started earlier
//                   than estimated)
//   unknown         estimates with no time, not in the figures above
// p95s and p90s are nearest-rank. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/sim/simulator.h"
#include "tools/sim/trace.h"

namespace dljob::scheduler::sim {

struct EstimateAccuracy {
  int64_t count = 0;    // with a time, of jobs that started
  int64_t unknown = 0;  // with no time
  double median_error = 0;
  double p90_error = 0;
  double within_25 = 0;  // fraction of count
  double median_bias = 0;
  bool operator==(const EstimateAccuracy&) const = default;
};

struct Summary {
  std::string policy;
  int64_t jobs = 0;
  int64_t finished = 0;
  int64_t deadline_exceeded = 0;  // finished by reaching their time limit
  double avg_jct = 0;
  double p95_jct = 0;
  double avg_wait = 0;
  double p95_wait = 0;
  int64_t makespan = 0;
  double gpu_allocation = 0;
  double gpu_allocation_queued = 0;
  double fragmentation = 0;
  int64_t preemptions = 0;
  int64_t resizes = 0;  // elastic jobs grown or shrunk
  double wall_seconds = 0;
  // Only when the replay scored start-time estimates.
  bool estimated = false;
  EstimateAccuracy estimates;      // every estimate
  EstimateAccuracy at_submission;  // each job's first
  int64_t estimated_jobs = 0;      // jobs with an estimate before their first start
  int64_t estimate_runs = 0;
  double estimate_wall_seconds = 0;
};

Summary Summarize(const Trace& trace, const SimResult& result);

// The nearest-rank p-th percentile (0 < p ≤ 100) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

}  // namespace dljob::scheduler::sim
