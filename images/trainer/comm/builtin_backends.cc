#include "images/trainer/comm/builtin_backends.h"

#include "images/trainer/comm/mpi_collective.h"

namespace dljob::trainer {
namespace {

class MpiBackend : public CollectiveBackend {
 public:
  CollectiveChoice kind() const override { return CollectiveChoice::kMpi; }
  Status Enabled() override { return Status::Ok(); }
  Result<std::unique_ptr<Collective>> Create(MPI_Comm world, int /*local_rank*/) override {
    Result<std::unique_ptr<MpiCollective>> created = MpiCollective::Create(world);
    if (!created.ok()) return created.status();
    return std::unique_ptr<Collective>(std::move(*created));
  }
};

}  // namespace

CollectiveBackendPtr MakeMpiBackend() { return std::make_unique<MpiBackend>(); }

CollectiveRegistry BuiltinCollectiveBackends() {
  CollectiveRegistry registry;
  registry.Add(MakeNcclBackend());
  registry.Add(MakeMpiBackend());
  return registry;
}

Status NcclDeviceCheck(const CudaDevices& cuda) {
  if (cuda.count > 0) return Status::Ok();
  const std::string why = cuda.error.empty() ? "no CUDA device found" : cuda.error;
  return Status::FailedPrecondition("--collective=nccl needs a CUDA device, and none is usable (" +
                                    why + ")");
}

}  // namespace dljob::trainer
