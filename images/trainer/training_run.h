// RunTraining: one rank's training job once its ranks are connected, from the parsed flags —
// threads and device, the checkpoint to resume from and how (elastic.h: at another rank count it
// may set the per-rank batch and learning rate), the training data, the model (initialisation,
// --data_format, --use_fp16), the header, the stall watchdog, the Trainer's run, then the
// timeline and the parameter dump.
//
// It is the boundary where library exceptions (LibTorch's c10::Error and any std::exception)
// become an error line (job_errors.h); after one, with other ranks possibly blocked in a
// collective, it takes the whole job down (MPI_Abort) rather than hang.
//
// REQUIRES: MPI is initialised (the stall watchdog and the abort use MPI_COMM_WORLD) and
// `collective` connects all the ranks of the job. Call from the main thread.
#pragma once

#include "images/trainer/comm/collective.h"
#include "images/trainer/flags.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

// Returns the exit code: 0, kUsageExitCode (data, device or checkpoint errors every rank meets
// alike), kRuntimeExitCode, or kStoppedExitCode (stop_signal.h: SIGTERM stopped the run, after a
// checkpoint when --checkpoint_dir is set).
int RunTraining(const TrainConfig& config, const ModelInfo& model, Collective& collective);

}  // namespace dljob::trainer
