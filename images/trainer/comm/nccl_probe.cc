// The run-time half of nccl_selection.h: asks the CUDA runtime when NCCL is built in.
#include "images/trainer/comm/nccl_selection.h"

#ifdef DLJOB_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

namespace dljob::trainer {

#ifdef DLJOB_HAVE_NCCL

bool NcclBuiltIn() { return true; }

CudaDevices ProbeCudaDevices() {
  CudaDevices devices;
  // Without a driver (or without a GPU) this fails; that is "no device", not an error.
  const cudaError_t rc = cudaGetDeviceCount(&devices.count);
  if (rc != cudaSuccess) {
    devices.count = 0;
    devices.error = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(rc);
    cudaGetLastError();  // clear the sticky-free error so later CUDA calls start clean
  } else if (devices.count == 0) {
    devices.error = "cudaGetDeviceCount: 0 devices";
  }
  return devices;
}

#else

bool NcclBuiltIn() { return false; }

CudaDevices ProbeCudaDevices() { return {0, "built without CUDA and NCCL"}; }

#endif

}  // namespace dljob::trainer
