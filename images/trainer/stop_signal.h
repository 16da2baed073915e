// SIGTERM as a request to stop with a checkpoint rather than at once.
//
// SIGTERM is how a rank is told to stop: the kubelet sends it (through the worker pods'
// entrypoint, operator/controller/graceful_stop.h) before the SIGKILL that ends the grace period,
// and dljob's local runner sends it to the ranks on Ctrl-C or `dljob delete`. InstallStopSignal
// sets a handler that only records the request. The Trainer polls StopRequested once a step and
// the ranks agree on it in that step's loss allreduce (any rank asking stops all of them at the
// same step); rank 0 writes a checkpoint of that step, every rank waits for it, and dljob-train
// exits kStoppedExitCode. A second SIGTERM changes nothing; SIGKILL still ends everything.
//
// The flag is process-wide because a signal handler can reach nothing else; only the handler
// sets it. Thread-safe.
#pragma once

namespace dljob::trainer {

// 128 + SIGTERM: what a shell reports for a process that SIGTERM ended, so a stopped job reads
// as stopped to mpirun, the kubelet and dljob alike.
inline constexpr int kStoppedExitCode = 143;

// Idempotent. Call once MPI is initialised (so nothing replaces the handler afterwards).
void InstallStopSignal();
// Whether SIGTERM arrived since InstallStopSignal.
bool StopRequested();

}  // namespace dljob::trainer
