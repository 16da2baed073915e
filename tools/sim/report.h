// dljob-sim's outputs: the summary table (one row per policy), the same as JSON, the per-job CSV,
// and an SVG plot of GPU allocation over time with one line per policy. Pure: strings in, strings
// out; the program writes them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sim/metrics.h"
#include "tools/sim/simulator.h"
#include "tools/sim/trace.h"

namespace dljob::scheduler::sim {

// Seconds as a person compares them: "95s", "45.2m", "12.34h".
std::string HumanSeconds(double seconds);

// One row per policy: jobs, finished (and, only when some replay had any, how many of them were
// ended by their time limit: "deadline"), avg/p95 JCT and wait, makespan, GPU allocation (all the
// time, and while jobs queued), fragmentation, preemptions, resizes (only when some replay
// resized an elastic job), wall time; when some replay scored
// start-time estimates, their median and p90 error, the share within ±25% and the share unknown
// (metrics.h).
std::string FormatTable(const std::vector<Summary>& summaries);

// {"<policy>": {"avg_jct": s, "p95_jct": s, "avg_wait": s, "p95_wait": s, "makespan": s,
//  "gpu_allocation": fraction, "preemptions": n, "gpu_allocation_queued": fraction,
//  "fragmentation": fraction, "jobs": n,
//  "finished": n, "deadline_exceeded": n, "wall_seconds": s[, "resizes": n when some]}, ...} in
// the policies' order; a
// replay that scored start-time estimates adds "estimates": {"all": A, "at_submission": A,
// "jobs": n, "runs": n, "wall_seconds": s}, each A {"count", "unknown", "median_error",
// "p90_error", "within_25", "median_bias"} (seconds, fractions).
nlohmann::ordered_json SummaryJson(const std::vector<Summary>& summaries);

// policy,name,submit_time,start_time,finish_time,jct,wait,num_gpu,queue,priority,preemptions,
// deadline_exceeded — one row per policy and job; times empty for a job that never started or
// finished.
std::string JobsOutCsv(const Trace& trace, const std::vector<SimResult>& results);

// policy,time,name,event,gpus,for_job — one row per SimResult::events entry (start, end,
// deadline, preempt, shrink, grow; gpus after it; for_job: the job a preemption or shrink made
// room for), by policy, then time.
std::string EventsOutCsv(const Trace& trace, const std::vector<SimResult>& results);

// policy,name,submit_time,made_at,estimate,basis,start_time,error — one row per start-time
// estimate scored (SimResult::estimates); estimate, start_time and error (estimate − start) empty
// when there is none.
std::string EstimatesOutCsv(const Trace& trace, const std::vector<SimResult>& results);

// GPU allocation (% of all GPUs) over simulated hours, one polyline per policy, with axes, ticks,
// labels and a legend. Each line is averaged into at most `points` buckets.
std::string AllocationSvg(const std::vector<SimResult>& results, size_t points = 600);

}  // namespace dljob::scheduler::sim
