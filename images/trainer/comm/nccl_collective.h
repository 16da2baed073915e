// NcclCollective: a Collective over an NCCL communicator, one CUDA device per rank.
//
// Compiled only when CMake finds the CUDA toolkit and NCCL; chosen at run time through the NCCL
// backend of comm/builtin_backends.h. Create bootstraps the communicator over MPI: rank 0 makes the
// NCCL unique id and MPI_Bcast hands it to every rank, then all ranks call ncclCommInitRank.
// REQUIRES: an MpiEnvironment outlives it, and each rank on a node gets its own device.
//
// The Collective interface passes host float buffers (this LibTorch build keeps tensors on the
// CPU). Each operation therefore copies the buffer into a device staging buffer on the
// collective's own CUDA stream (cudaMemcpyAsync), runs the NCCL operation there, copies the
// result back and synchronises the stream before returning, so the host buffer is final when the
// call returns. A trainer whose gradients live on the GPU would hand device pointers straight to
// NCCL and skip both copies; the staging keeps this backend correct for every caller meanwhile.
// The staging buffers grow to the largest operation seen and are kept for reuse. ReduceSum is
// ncclReduce, ReduceScatterSum ncclReduceScatter, AllreduceSumHalf ncclAllReduce on ncclHalf
// (NCCL adds halves in the device's half arithmetic), each staged the same way.
//
// Errors come back as Status values naming the call and the text of ncclGetErrorString or
// cudaGetErrorString. After a failure the communicator is aborted and the object is unusable.
//
// Thread-safety: thread-compatible. Call it from one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <mpi.h>

#include "images/trainer/comm/collective.h"

struct ncclComm;
struct CUstream_st;

namespace dljob::trainer {

class NcclCollective : public Collective {
 public:
  // Collective over the ranks of `bootstrap` (usually MPI_COMM_WORLD), this rank on CUDA device
  // `device`. Every rank of `bootstrap` must call Create.
  static Result<std::unique_ptr<NcclCollective>> Create(MPI_Comm bootstrap, int device);
  ~NcclCollective() override;

  NcclCollective(const NcclCollective&) = delete;
  NcclCollective& operator=(const NcclCollective&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }
  int device() const { return device_; }

  Status AllreduceSum(float* data, size_t count) override;
  Status Broadcast(float* data, size_t count, int root) override;
  Status Allgather(const float* send, size_t count, float* recv) override;
  // A one-element allreduce: returns once every rank has reached it.
  Status Barrier() override;
  Status ReduceSum(float* data, size_t count, int root) override;
  Status ReduceScatterSum(const float* send, float* recv, size_t block) override;
  Status AllreduceSumHalf(uint16_t* data, size_t count) override;
  using Collective::AllreduceSum;
  using Collective::Broadcast;

 private:
  NcclCollective(int rank, int size, int device) : rank_(rank), size_(size), device_(device) {}

  // Makes the staging buffers hold at least `in_bytes` / `out_bytes` bytes.
  Status Reserve(size_t in_bytes, size_t out_bytes);
  // Copies host -> staging, runs `op(in_staging, out_staging, stream)`, copies staging -> host,
  // waits for the stream.
  template <typename Op>
  Status Staged(const char* what, const void* in, size_t in_bytes, void* out, size_t out_bytes,
                Op op);
  Status Fail(Status status);

  int rank_;
  int size_;
  int device_;
  ncclComm* comm_ = nullptr;
  CUstream_st* stream_ = nullptr;
  void* in_ = nullptr;   // device staging, in_capacity_ bytes
  void* out_ = nullptr;  // device staging, out_capacity_ bytes
  size_t in_capacity_ = 0;
  size_t out_capacity_ = 0;
  bool failed_ = false;
};

}  // namespace dljob::trainer
