// Collective: the communication seam of dljob-train.
//
// A Collective connects the `size()` ranks of one training job. Every rank calls the same
// collective operations in the same order with buffers of the same length; the operations block
// until every rank has contributed. Implementations: MpiCollective (comm/mpi_collective.h, CPU
// buffers over MPI) and LoopbackCollective (comm/loopback_collective.h, a single in-process rank
// for tests). A later NCCL backend will implement the same interface for GPU tensors.
//
// Errors (a broken communicator, a mismatched buffer) come back as a Status; after a failed
// operation the Collective is no longer usable and the job should exit.
//
// Thread-safety: a Collective is thread-compatible. Call it from one thread at a time.
#pragma once

#include <cstddef>
#include <string>

#include <torch/types.h>

#include "jobs/status.h"

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
  // Returns once every rank has called Barrier.
  virtual Status Barrier() = 0;

  // Tensor forms. REQUIRES: `tensor` is float32. Contiguous CPU tensors are reduced in place;
  // others (non-contiguous, or on a GPU) are staged through a contiguous CPU copy and written back.
  Status AllreduceSum(torch::Tensor& tensor);
  Status Broadcast(torch::Tensor& tensor, int root);
};

// Every rank passes its own local Status; every rank gets back the same answer. If any rank
// failed, `*first_failed_rank` is the lowest rank whose status was not OK and the result is false.
// A communication error is returned through `comm_status`. Used so that, for example, a data-load
// failure on one rank stops all ranks together and exactly one rank prints the error.
bool AllRanksOk(Collective& collective, const Status& local, int* first_failed_rank,
                Status* comm_status);

}  // namespace dljob::trainer
