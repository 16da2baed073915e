#include "images/trainer/comm/nccl_selection.h"

namespace dljob::trainer {

Result<CollectiveKind> ChooseCollective(std::string_view flag, bool nccl_built_in,
                                        const CudaDevices& cuda) {
  const bool nccl_usable = nccl_built_in && cuda.count > 0;
  if (flag == "mpi") return CollectiveKind::kMpi;
  if (flag == "auto") return nccl_usable ? CollectiveKind::kNccl : CollectiveKind::kMpi;
  if (flag != "nccl") {
    return Status::InvalidArgument("--collective=" + std::string(flag) +
                                   ": unknown collective (known: auto, mpi, nccl)");
  }
  if (!nccl_built_in) {
    return Status::FailedPrecondition(
        "--collective=nccl: this dljob-train was built without CUDA and NCCL");
  }
  if (cuda.count <= 0) {
    std::string why = cuda.error.empty() ? "no CUDA device found" : cuda.error;
    return Status::FailedPrecondition("--collective=nccl needs a CUDA device, and none is usable (" +
                                      why + ")");
  }
  return CollectiveKind::kNccl;
}

const char* CollectiveKindName(CollectiveKind kind) {
  return kind == CollectiveKind::kNccl ? "nccl" : "mpi";
}

}  // namespace dljob::trainer
