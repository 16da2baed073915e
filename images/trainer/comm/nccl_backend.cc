// The NCCL backend of builtin_backends.h. The one file that knows whether this binary has NCCL:
// CMake defines DLJOB_HAVE_NCCL for it alone when it finds CUDA and NCCL.
#include "images/trainer/comm/builtin_backends.h"

#ifdef DLJOB_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "images/trainer/comm/nccl_collective.h"
#endif

namespace dljob::trainer {
namespace {

#ifdef DLJOB_HAVE_NCCL

class NcclBackend : public CollectiveBackend {
 public:
  CollectiveChoice kind() const override { return CollectiveChoice::kNccl; }
  Status Enabled() override {
    devices_ = ProbeCudaDevices();
    return NcclDeviceCheck(devices_);
  }
  Result<std::unique_ptr<Collective>> Create(MPI_Comm world, int local_rank) override {
    if (devices_.count <= 0) return NcclDeviceCheck(devices_);  // Enabled() not asked or failed
    Result<std::unique_ptr<NcclCollective>> created =
        NcclCollective::Create(world, local_rank % devices_.count);
    if (!created.ok()) return created.status();
    return std::unique_ptr<Collective>(std::move(*created));
  }

 private:
  CudaDevices devices_;  // as Enabled() found them
};

#else

constexpr const char* kNotBuiltIn =
    "--collective=nccl: this dljob-train was built without CUDA and NCCL";

class NcclBackend : public CollectiveBackend {
 public:
  CollectiveChoice kind() const override { return CollectiveChoice::kNccl; }
  Status Enabled() override { return Status::FailedPrecondition(kNotBuiltIn); }
  Result<std::unique_ptr<Collective>> Create(MPI_Comm, int) override {
    return Status::FailedPrecondition(kNotBuiltIn);
  }
};

#endif

}  // namespace

#ifdef DLJOB_HAVE_NCCL

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

CudaDevices ProbeCudaDevices() { return {0, "built without CUDA and NCCL"}; }

#endif

CollectiveBackendPtr MakeNcclBackend() { return std::make_unique<NcclBackend>(); }

}  // namespace dljob::trainer
