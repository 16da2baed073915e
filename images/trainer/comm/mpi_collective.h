// MpiCollective: a Collective over an MPI communicator, for CPU float buffers.
//
// It duplicates the communicator it is given, so its traffic never mixes with other MPI users in
// the process, and frees the duplicate when destroyed. REQUIRES: an MpiEnvironment outlives it.
// MPI error codes are converted to Status values naming the operation and MPI's error string.
// Large buffers are sent in chunks of at most INT_MAX elements (MPI counts are ints).
//
// Thread-safety: thread-compatible; with MPI_THREAD_FUNNELED, use it from the main thread only.
#pragma once

#include <memory>

#include <mpi.h>

#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

class MpiCollective : public Collective {
 public:
  // Duplicates `comm` (usually MPI_COMM_WORLD).
  static Result<std::unique_ptr<MpiCollective>> Create(MPI_Comm comm);
  ~MpiCollective() override;

  MpiCollective(const MpiCollective&) = delete;
  MpiCollective& operator=(const MpiCollective&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  Status AllreduceSum(float* data, size_t count) override;
  Status Broadcast(float* data, size_t count, int root) override;
  Status Barrier() override;
  using Collective::AllreduceSum;
  using Collective::Broadcast;

 private:
  MpiCollective(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}

  MPI_Comm comm_;
  int rank_;
  int size_;
};

// "MPI_Allreduce: <MPI's error string>" for a failed MPI call.
Status MpiStatus(const char* operation, int mpi_error);

}  // namespace dljob::trainer
