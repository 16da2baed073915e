// How dljob-train reports a failure: one `dljob-train: error: <message>` line on stderr, an
// optional `hint: <what to do>` line, and an exit code — flags.h's kUsageExitCode (2) for usage
// and data errors (bad flag, unknown model, missing dataset), kRuntimeExitCode (1) for failures
// while running (MPI errors, a diverging loss, unexpected LibTorch errors). Never a stack trace.
// (A run stopped by SIGTERM is not a failure: it exits stop_signal.h's kStoppedExitCode, 143.)
//
// Messages from ranks other than 0 say which rank they come from; rank 0's read as in a 1-rank
// run. A failure every rank must agree on goes through ExitIfAnyRankFailed, so exactly one rank
// prints it. Thread-compatible (writes to std::cerr).
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

inline constexpr int kRuntimeExitCode = 1;

// Writes the error line and, when `hint` is not empty, the hint line.
void PrintError(const std::string& message, const std::string& hint = "");

// "rank 3: " for rank 3, "" for rank 0.
std::string RankPrefix(int rank);

// All ranks agree whether `local` failed anywhere; the lowest failing rank prints its error (with
// `hint`). Returns nullopt when no rank failed, else the exit code to stop with: `exit_code`, or
// kRuntimeExitCode when the agreement itself failed (each rank then prints the communication
// error).
std::optional<int> ExitIfAnyRankFailed(Collective& collective, const Status& local, int exit_code,
                                       const std::string& hint);

}  // namespace dljob::trainer
