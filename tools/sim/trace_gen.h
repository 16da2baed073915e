// A synthetic trace shaped like the published GPU-cluster traces (Microsoft Philly, SenseTime
// Helios): heavy-tailed durations (most jobs minutes, a few days), mostly 1–8 GPUs with some
// 16–64-GPU gangs, Poisson arrivals at an offered load that keeps a queue, a cluster of 8-GPU
// nodes of three GPU models with NVLink clique, rack and zone labels, and four team queues.
//
//   durations   log-normal, median 15 min, σ 1.9 (mean ≈ 1.5 h), clamped to [1 min, 7 days]
//   GPUs        1: 45%, 2: 12%, 4: 15%, 8: 18%, 16: 5%, 32: 3%, 64: 2%; workers of up to 8
//   models      nodes: A100 50%, V100 30%, T4 20% (by rack); 40% of jobs ask for one, weighted by
//               its share of GPUs, the rest take any
//   priority    0: 85%, 1: 12%, 2: 3%
//   time limit  the duration × U(1.2, 3) + 10 min, rounded up to 10 min (users overestimate)
//   arrivals    Poisson over a span S where Σ GPUs × min(duration, S) = load × GPUs × S
//   queues      team-a..team-d, each with a nominal quarter of all GPUs (any model) and
//               borrowing up to all of them
//   elastic     with elastic_share > 0, that share of the jobs of two or more workers (drawn
//               from a stream of its own, so the rest of the trace is the same for every share)
//               is elastic from a quarter of its GPUs, rounded down to whole workers (at least
//               one), up to all of them, and its time limit is scaled by max / min (rounded
//               up to 10 min) so that a run on its minimum throughout fits it
// Deterministic for a seed (drawn from base/random.h's kit, not the standard library's
// distributions, so every platform gives the same trace). Pure.
#pragma once

#include <cstdint>

#include "tools/sim/trace.h"

namespace dljob::scheduler::sim {

struct TraceShape {
  int64_t jobs = 20000;
  int64_t gpus = 6500;  // rounded down to whole 8-GPU nodes
  uint64_t seed = 1;
  double load = 1.5;  // offered GPU-seconds per GPU-second of the arrival span
  double elastic_share = 0;
};

Trace GenerateTrace(const TraceShape& shape);

}  // namespace dljob::scheduler::sim
