// Defaulting: fills every unset optional field of a DLJob with its effective value.
//
// The one place defaults live; the CLI, the local runner and the operator all call it before
// validating. Pure and idempotent: ApplyDefaults(ApplyDefaults(j)) == ApplyDefaults(j). Fields
// whose default depends on invalid input (e.g. gpusPerWorker when gpus is missing) are left
// unset for validation to report.
#pragma once

#include "jobs/dljob_types.h"

namespace dljob {

inline constexpr int64_t kDefaultGpusPerNode = 8;
inline constexpr int64_t kDefaultSshPort = 2222;
inline constexpr int64_t kDefaultBackoffLimit = 3;
inline constexpr char kDefaultNamespace[] = "default";
inline constexpr char kDefaultQueue[] = "default";
inline constexpr char kDefaultCheckpointMountPath[] = "/dljob/checkpoint";
inline constexpr int64_t kDefaultCheckpointEverySteps = 500;
inline constexpr int64_t kDefaultCheckpointKeep = 3;

// Defaults:
//   metadata.namespace           "default"
//   spec.gpus                    elastic.maxGpus, when spec.elastic sets it
//   spec.gpusPerWorker           DefaultGpusPerWorker(gpus): a whole 8-GPU node when gpus allows;
//                                with spec.elastic, DefaultGpusPerWorker(gcd(minGpus, maxGpus))
//   spec.mpi.implementation      OpenMPI
//   spec.mpi.slotsPerWorker      gpusPerWorker (one rank per GPU)
//   spec.mpi.sshPort             2222
//   spec.data[].readOnly         true (datasets are inputs)
//   spec.checkpoint.mountPath    /dljob/checkpoint
//   spec.checkpoint.everySteps   500, when everySeconds is not set either
//   spec.checkpoint.keep         3
//   spec.runPolicy.backoffLimit  3
//   spec.runPolicy.cleanPodPolicy Running
//   spec.runPolicy.suspend       false
//   spec.scheduling.queue        "default", priority 0, topology Pack
void ApplyDefaults(DLJob& job);

// The largest divisor of `gpus` that is at most 8, so the job splits into equal workers that fit
// a node: 16 → 8 (2 workers), 12 → 6 (2 workers), 4 → 4 (1 worker), 7 → 7, 11 → 1.
// REQUIRES: gpus > 0.
int64_t DefaultGpusPerWorker(int64_t gpus);

}  // namespace dljob
