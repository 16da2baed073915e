// Collective: the communication seam of dljob-train.
//
// A Collective connects the `size()` ranks of one training job. Every rank calls the same
// collective operations in the same order with buffers of the same length; the operations block
// until every rank has contributed. Implementations: MpiCollective (comm/mpi_collective.h, CPU
// buffers over MPI), NcclCollective (comm/nccl_collective.h, one CUDA device per rank),
// HierarchicalCollective (comm/hierarchical_collective.h, two-level allreduce over nodes built
// from other Collectives), LoopbackCollective (comm/loopback_collective.h, a single in-process
// rank for tests) and the WatchedCollective decorator (comm/watched_collective.h).
//
// ReduceSum (to one root, for the parameter-server update), ReduceScatterSum (the first half of a
// hierarchical allreduce, comm/hierarchical_collective.h) and AllreduceSumHalf (fp16 compression
// of the fusion layer) have defaults built on AllreduceSum that are correct for any backend; the
// MPI and NCCL backends override them with their native operations. AllgatherBytes (the packed
// words of 2-bit gradient compression, comm/gradient_compression.h) has a default built on the
// float Allgather; MPI and loopback override it with a native byte allgather.
//
// Besides the blocking operations there is one non-blocking pair, StartAllreduceSum/Wait, which
// the fusion layer (comm/fused_allreduce.h) uses to keep a few segments of its buffer in flight.
// Backends without a native non-blocking allreduce get the default: Start does the blocking
// AllreduceSum and Wait returns its status.
//
// Errors (a broken communicator, a mismatched buffer) come back as a Status; after a failed
// operation the Collective is no longer usable and the job should exit.
//
// Callers may say what the next operations are for (SetStep, Annotate: "loss", "gradient bucket
// 3 of 7"); backends ignore it, and WatchedCollective (comm/watched_collective.h) reports it when
// a collective stalls.
//
// Thread-safety: a Collective is thread-compatible. Call it from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "base/status.h"

namespace dljob::trainer {

class Collective {
 public:
  virtual ~Collective() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // A short description for logs, e.g. "mpi" or "loopback".
  virtual std::string name() const = 0;

  // Replaces data[0..count) on every rank by the element-wise sum over all ranks.
  virtual Status AllreduceSum(float* data, size_t count) = 0;
  // Replaces data[0..count) on every rank by the copy held by `root`.
  virtual Status Broadcast(float* data, size_t count, int root) = 0;
  // Gathers every rank's send[0..count) into recv[0..count * size()), rank r's block at
  // recv + r * count. REQUIRES: the same count on every rank; recv does not overlap send.
  virtual Status Allgather(const float* send, size_t count, float* recv) = 0;
  // Gathers every rank's send[0..bytes) into recv[0..bytes * size()), rank r's block at
  // recv + r * bytes. The bytes are moved, never interpreted. REQUIRES: the same bytes on every
  // rank; recv does not overlap send. The default pads the bytes to whole floats and allgathers
  // them as floats through memcpy'd staging buffers (exact: an allgather moves bits unchanged).
  virtual Status AllgatherBytes(const void* send, size_t bytes, void* recv);
  // Returns once every rank has called Barrier.
  virtual Status Barrier() = 0;

  // On `root`, replaces data[0..count) by the element-wise sum over all ranks; on the other ranks
  // data[0..count) is left unspecified (it may be unchanged or hold a partial sum). The default
  // allreduces, so every rank holds the sum.
  virtual Status ReduceSum(float* data, size_t count, int root);
  // send[0..block * size()) on every rank; recv[0..block) gets this rank's block of the sum, i.e.
  // recv[i] = sum over ranks of send[rank() * block + i]. REQUIRES: the same block on every rank;
  // recv does not overlap send. The default allreduces a copy of send.
  virtual Status ReduceScatterSum(const float* send, float* recv, size_t block);
  // data[0..count) are IEEE binary16 bit patterns (comm/half.h); replaced on every rank by their
  // sum over ranks, each addition done in float and rounded back to half (so the result may
  // differ from a float sum by the roundings, and overflows to infinity past 65504). The default
  // converts to float, allreduces and rounds once.
  virtual Status AllreduceSumHalf(uint16_t* data, size_t count);

  // Starts summing data[0..count) over all ranks and returns a request id; the result is in
  // `data` once Wait(id) has returned OK. Until then the buffer belongs to the Collective.
  // Every rank must start the same requests in the same order. Each started request must be
  // waited for exactly once; requests may be waited for in any order. The default runs the
  // blocking AllreduceSum now.
  virtual Result<uint64_t> StartAllreduceSum(float* data, size_t count);
  virtual Status Wait(uint64_t request);

  // Diagnostics only: the training step and the purpose of the operations that follow. Cheap
  // (no allocation); the default ignores them.
  virtual void SetStep(int64_t /*step*/) {}
  virtual void Annotate(std::string_view /*purpose*/) {}

  // Tensor forms. REQUIRES: `tensor` is float32. Contiguous CPU tensors are reduced in place;
  // others (non-contiguous, or on a GPU) are staged through a contiguous CPU copy and written back.
  Status AllreduceSum(torch::Tensor& tensor);
  Status Broadcast(torch::Tensor& tensor, int root);

 private:
  // Outcomes of the default StartAllreduceSum, until waited for.
  uint64_t next_request_ = 0;
  std::vector<std::pair<uint64_t, Status>> finished_;
};

// Every rank passes its own local Status; every rank gets back the same answer. If any rank
// failed, `*first_failed_rank` is the lowest rank whose status was not OK and the result is false.
// A communication error is returned through `comm_status`. Used so that, for example, a data-load
// failure on one rank stops all ranks together and exactly one rank prints the error.
bool AllRanksOk(Collective& collective, const Status& local, int* first_failed_rank,
                Status* comm_status);

}  // namespace dljob::trainer
