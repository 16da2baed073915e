// Which Collective dljob-train runs over: the --collective flag against what this machine has.
//
// `--collective=mpi` always means MpiCollective (CPU buffers). `--collective=nccl` means
// NcclCollective (comm/nccl_collective.h) and is refused, with a reason, when this binary was
// built without NCCL or no CUDA device is usable at run time. `--collective=auto` (the default)
// picks NCCL only when it was built in and a CUDA device is present now, and MPI otherwise, so
// the same binary runs on GPU nodes and CPU-only machines.
//
// ChooseCollective is pure; ProbeCudaDevices asks the CUDA runtime (when built with NCCL) and is
// safe on machines without a GPU driver: the runtime's error then reads as "no device".
// Thread-safety: all functions are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace dljob::trainer {

enum class CollectiveKind { kMpi, kNccl };

// What the CUDA runtime said about this machine.
struct CudaDevices {
  int count = 0;
  // Why there are none ("CUDA driver version is insufficient..."); empty when count > 0.
  std::string error;
};

// True when this binary was compiled with NcclCollective (DLJOB_HAVE_NCCL).
bool NcclBuiltIn();

// cudaGetDeviceCount, with a failure reported as zero devices and the runtime's error string.
// Without NCCL built in: zero devices, error "built without CUDA and NCCL".
CudaDevices ProbeCudaDevices();

// `flag` is "auto", "mpi" or "nccl". The error (kFailedPrecondition, or kInvalidArgument for an
// unknown value) names --collective and says why NCCL cannot be used here.
Result<CollectiveKind> ChooseCollective(std::string_view flag, bool nccl_built_in,
                                        const CudaDevices& cuda);

// "mpi" or "nccl".
const char* CollectiveKindName(CollectiveKind kind);

}  // namespace dljob::trainer
