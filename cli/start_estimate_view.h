// How the CLI shows a waiting job's start estimate (status.startEstimate, written by the
// operator from the queue's own plan; scheduler/queue/start_estimate.h).
//
//   dljob list's ESTIMATED START column:  ~12m   ~1h30m   now   overdue   unknown   -
//   dljob get, below the table:           Estimated start: ~12m (2026-11-22T05:17:00Z): when
//                                         train-a ends in about 12 min, from its steps and
//                                         images/sec. An estimate, not a promise.
//
// Times are relative to "now" and rounded as an estimate deserves: to the minute under an hour,
// to ten minutes under eight hours, to the hour beyond. "now": the time has come (up to a minute
// ago); "overdue": it passed longer ago and the job still waits, so the estimate was wrong (the
// operator re-estimates as things change); "unknown": no time (the assumption says why) or no
// estimate yet; "-": the job does not wait. Pure functions of the job and "now"; thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "jobs/dljob_types.h"

namespace dljob {

// Whether the job waits to be admitted: Queued, or no phase yet.
bool IsWaiting(const DLJob& job);

// The ESTIMATED START cell.
std::string EstimatedStart(const DLJob& job, std::chrono::system_clock::time_point now);

// The "Estimated start: …" line (with its newline) for a waiting job that has an estimate; "" for
// any other job.
std::string EstimateLine(const DLJob& job, std::chrono::system_clock::time_point now);

}  // namespace dljob
