// The collective backends built into dljob-train, and the CUDA probe NCCL's Enabled() uses.
//
//   nccl  NcclCollective (comm/nccl_collective.h), one CUDA device per rank. Compiled in only when
//         CMake finds CUDA and NCCL; without them its Enabled() says the binary was built
//         without them. With them it is enabled when the CUDA runtime reports a device (the
//         runtime's error then reads as "no device", so it is safe without a GPU driver).
//   mpi   MpiCollective (comm/mpi_collective.h), CPU buffers; always enabled, the catch-all.
//
// BuiltinCollectiveBackends() lists them in that order, so --collective=auto picks NCCL only
// when it was built in and a CUDA device is present now, and MPI otherwise: the same binary runs
// on GPU nodes and CPU-only machines. Whether NCCL is built in is known only inside
// comm/nccl_backend.cc.
//
// Thread-safety: all functions are thread-safe; the backends they return are not.
#pragma once

#include <string>

#include "base/status.h"
#include "images/trainer/comm/collective_backend.h"

namespace dljob::trainer {

// NCCL, then MPI.
CollectiveRegistry BuiltinCollectiveBackends();

CollectiveBackendPtr MakeMpiBackend();
CollectiveBackendPtr MakeNcclBackend();

// What the CUDA runtime said about this machine.
struct CudaDevices {
  int count = 0;
  // Why there are none ("CUDA driver version is insufficient..."); empty when count > 0.
  std::string error;
};

// cudaGetDeviceCount, with a failure reported as zero devices and the runtime's error string.
// Without NCCL built in: zero devices, error "built without CUDA and NCCL".
CudaDevices ProbeCudaDevices();

// NCCL's Enabled() on a machine with these devices (pure): OK with at least one, else
// FailedPrecondition "--collective=nccl needs a CUDA device, and none is usable (<why>)".
Status NcclDeviceCheck(const CudaDevices& cuda);

}  // namespace dljob::trainer
