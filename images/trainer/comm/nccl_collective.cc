#include "images/trainer/comm/nccl_collective.h"

#include <cuda_runtime_api.h>

#include <nccl.h>

#include "images/trainer/comm/mpi_collective.h"

namespace dljob::trainer {
namespace {

Status CudaStatus(const char* call, cudaError_t rc) {
  if (rc == cudaSuccess) return Status::Ok();
  return Status::Unavailable(std::string(call) + ": " + cudaGetErrorString(rc));
}

Status NcclStatus(const char* call, ncclResult_t rc) {
  if (rc == ncclSuccess) return Status::Ok();
  return Status::Unavailable(std::string(call) + ": " + ncclGetErrorString(rc));
}

}  // namespace

Result<std::unique_ptr<NcclCollective>> NcclCollective::Create(MPI_Comm bootstrap, int device) {
  int rank = 0;
  int size = 0;
  if (Status s = MpiStatus("MPI_Comm_rank", MPI_Comm_rank(bootstrap, &rank)); !s.ok()) return s;
  if (Status s = MpiStatus("MPI_Comm_size", MPI_Comm_size(bootstrap, &size)); !s.ok()) return s;
  std::unique_ptr<NcclCollective> c(new NcclCollective(rank, size, device));
  if (Status s = CudaStatus("cudaSetDevice", cudaSetDevice(device)); !s.ok()) {
    return s.WithContext("nccl collective: device " + std::to_string(device));
  }
  // Rank 0's id reaches every rank even when rank 0 failed to make one: a zeroed id then makes
  // every rank's ncclCommInitRank fail, rather than leaving the others waiting in the broadcast.
  ncclUniqueId id{};
  Status id_status;
  if (rank == 0) id_status = NcclStatus("ncclGetUniqueId", ncclGetUniqueId(&id));
  if (Status s = MpiStatus("MPI_Bcast", MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, bootstrap));
      !s.ok()) {
    return s.WithContext("nccl collective: sending the NCCL id");
  }
  if (!id_status.ok()) return id_status.WithContext("nccl collective");
  cudaStream_t stream = nullptr;
  if (Status s =
          CudaStatus("cudaStreamCreate", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      !s.ok()) {
    return s.WithContext("nccl collective");
  }
  c->stream_ = stream;
  ncclComm_t comm = nullptr;
  if (Status s = NcclStatus("ncclCommInitRank", ncclCommInitRank(&comm, size, id, rank)); !s.ok()) {
    return s.WithContext("nccl collective: rank " + std::to_string(rank) + " of " +
                         std::to_string(size) + " on device " + std::to_string(device));
  }
  c->comm_ = comm;
  return c;
}

NcclCollective::~NcclCollective() {
  if (comm_ != nullptr) {
    // A failed communicator may have operations that never finish; abort instead of waiting.
    if (failed_) {
      ncclCommAbort(comm_);
    } else {
      ncclCommDestroy(comm_);
    }
  }
  if (in_ != nullptr) cudaFree(in_);
  if (out_ != nullptr) cudaFree(out_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status NcclCollective::Fail(Status status) {
  failed_ = true;
  return status;
}

Status NcclCollective::Reserve(size_t in_bytes, size_t out_bytes) {
  auto grow = [](void** buffer, size_t* capacity, size_t want) -> Status {
    if (want <= *capacity) return Status::Ok();
    if (*buffer != nullptr) cudaFree(*buffer);
    *buffer = nullptr;
    *capacity = 0;
    void* fresh = nullptr;
    if (Status s = CudaStatus("cudaMalloc", cudaMalloc(&fresh, want)); !s.ok()) {
      return s.WithContext("nccl collective: staging buffer of " + std::to_string(want) + " bytes");
    }
    *buffer = fresh;
    *capacity = want;
    return Status::Ok();
  };
  if (Status s = grow(&in_, &in_capacity_, in_bytes); !s.ok()) return s;
  return grow(&out_, &out_capacity_, out_bytes);
}

template <typename Op>
Status NcclCollective::Staged(const char* what, const void* in, size_t in_bytes, void* out,
                              size_t out_bytes, Op op) {
  if (failed_) {
    return Status::FailedPrecondition(std::string(what) + ": the nccl collective failed earlier");
  }
  if ((in == nullptr && in_bytes > 0) || (out == nullptr && out_bytes > 0)) {
    return Status::InvalidArgument(std::string(what) + ": null buffer");
  }
  if (Status s = CudaStatus("cudaSetDevice", cudaSetDevice(device_)); !s.ok()) return Fail(s);
  if (Status s = Reserve(in_bytes, out_bytes); !s.ok()) return Fail(s);
  cudaStream_t stream = stream_;
  if (in_bytes > 0) {
    Status s = CudaStatus("cudaMemcpyAsync",
                          cudaMemcpyAsync(in_, in, in_bytes, cudaMemcpyHostToDevice, stream));
    if (!s.ok()) return Fail(s.WithContext(what));
  }
  if (Status s = NcclStatus(what, op(in_, out_, stream)); !s.ok()) return Fail(s);
  if (out_bytes > 0) {
    Status s = CudaStatus("cudaMemcpyAsync",
                          cudaMemcpyAsync(out, out_, out_bytes, cudaMemcpyDeviceToHost, stream));
    if (!s.ok()) return Fail(s.WithContext(what));
  }
  if (Status s = CudaStatus("cudaStreamSynchronize", cudaStreamSynchronize(stream)); !s.ok()) {
    return Fail(s.WithContext(what));
  }
  return Status::Ok();
}

Status NcclCollective::AllreduceSum(float* data, size_t count) {
  if (count == 0) return Status::Ok();  // every rank passes the same count: nothing to send
  ncclComm_t comm = comm_;
  const size_t bytes = count * sizeof(float);
  return Staged("ncclAllReduce", data, bytes, data, bytes,
                [comm, count](void* in, void* /*out*/, cudaStream_t stream) {
                  return ncclAllReduce(in, in, count, ncclFloat32, ncclSum, comm, stream);
                });
}

Status NcclCollective::Broadcast(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return Status::InvalidArgument("broadcast: root " + std::to_string(root) +
                                   " is not a rank of " + std::to_string(size_));
  }
  if (count == 0) return Status::Ok();
  ncclComm_t comm = comm_;
  // Only the root's data matters, but every rank stages in and out of the same device buffer.
  const size_t bytes = count * sizeof(float);
  return Staged("ncclBroadcast", data, bytes, data, bytes,
                [comm, count, root](void* in, void* /*out*/, cudaStream_t stream) {
                  return ncclBroadcast(in, in, count, ncclFloat32, root, comm, stream);
                });
}

Status NcclCollective::Allgather(const float* send, size_t count, float* recv) {
  if (count == 0) return Status::Ok();
  ncclComm_t comm = comm_;
  const size_t total = count * static_cast<size_t>(size_);
  return Staged("ncclAllGather", send, count * sizeof(float), recv, total * sizeof(float),
                [comm, count](void* in, void* out, cudaStream_t stream) {
                  return ncclAllGather(in, out, count, ncclFloat32, comm, stream);
                });
}

Status NcclCollective::ReduceSum(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return Status::InvalidArgument("reduce: root " + std::to_string(root) + " is not a rank of " +
                                   std::to_string(size_));
  }
  if (count == 0) return Status::Ok();
  ncclComm_t comm = comm_;
  // Every rank copies its result back; only the root's is the sum, as the contract allows.
  const size_t bytes = count * sizeof(float);
  return Staged("ncclReduce", data, bytes, data, bytes,
                [comm, count, root](void* in, void* /*out*/, cudaStream_t stream) {
                  return ncclReduce(in, in, count, ncclFloat32, ncclSum, root, comm, stream);
                });
}

Status NcclCollective::ReduceScatterSum(const float* send, float* recv, size_t block) {
  if (block == 0) return Status::Ok();
  ncclComm_t comm = comm_;
  const size_t total = block * static_cast<size_t>(size_);
  return Staged("ncclReduceScatter", send, total * sizeof(float), recv, block * sizeof(float),
                [comm, block](void* in, void* out, cudaStream_t stream) {
                  return ncclReduceScatter(in, out, block, ncclFloat32, ncclSum, comm, stream);
                });
}

Status NcclCollective::AllreduceSumHalf(uint16_t* data, size_t count) {
  if (count == 0) return Status::Ok();
  ncclComm_t comm = comm_;
  const size_t bytes = count * sizeof(uint16_t);
  return Staged("ncclAllReduce (fp16)", data, bytes, data, bytes,
                [comm, count](void* in, void* /*out*/, cudaStream_t stream) {
                  return ncclAllReduce(in, in, count, ncclHalf, ncclSum, comm, stream);
                });
}

Status NcclCollective::Barrier() {
  float token = 0;
  return AllreduceSum(&token, 1);
}

}  // namespace dljob::trainer
