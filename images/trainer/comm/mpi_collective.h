// MpiCollective: a Collective over an MPI communicator, for CPU float buffers.
//
// It duplicates the communicator it is given, so its traffic never mixes with other MPI users in
// the process, and frees the duplicate when destroyed. REQUIRES: an MpiEnvironment outlives it.
// MPI error codes are converted to Status values naming the operation and MPI's error string.
//
// Large allreduces are segmented: a buffer longer than `segment_bytes` is reduced as consecutive
// segments (blocking MPI_Allreduce each when max_in_flight is 1, otherwise pipelined with up to
// `max_in_flight` MPI_Iallreduce outstanding), instead of one MPI_Allreduce of the whole buffer. On
// shared-memory nodes one huge MPI_Allreduce thrashes the caches (about 2.7x slower than many small
// ones for 100 MB, see docs/benchmarks/allreduce.md); segments of a few MB stay cache-resident.
// Other operations are sent in chunks of at most INT_MAX elements (MPI counts are ints).
//
// ReduceSum is MPI_Reduce (in place on the root), ReduceScatterSum MPI_Reduce_scatter_block,
// AllgatherBytes MPI_Allgather of MPI_BYTE (at most INT_MAX bytes per rank).
// AllreduceSumHalf sends 2-byte elements (a committed MPI datatype of two bytes) combined by a
// user MPI_Op (MPI_Op_create) that adds each pair in float and rounds back to half (comm/half.h);
// both are created with the collective and freed with it. Half allreduces are segmented like
// float ones (segment_bytes) but always blocking.
//
// Thread-safety: thread-compatible. Call it from the thread that initialised MPI (MPI may be
// initialised with only MPI_THREAD_FUNNELED).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <mpi.h>

#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

struct MpiCollectiveOptions {
  // Allreduces longer than this are segmented; 0 sends every allreduce whole.
  size_t segment_bytes = size_t{4} << 20;
  // Segments reduced at the same time (>= 1); 1: blocking MPI_Allreduce per segment, which
  // bench/allreduce_bench measured faster than Open MPI 4.1's MPI_Iallreduce on shared memory.
  int max_in_flight = 1;
};

class MpiCollective : public Collective {
 public:
  // Duplicates `comm` (usually MPI_COMM_WORLD).
  static Result<std::unique_ptr<MpiCollective>> Create(MPI_Comm comm,
                                                       MpiCollectiveOptions options = {});
  ~MpiCollective() override;

  MpiCollective(const MpiCollective&) = delete;
  MpiCollective& operator=(const MpiCollective&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  const MpiCollectiveOptions& options() const { return options_; }

  Status AllreduceSum(float* data, size_t count) override;
  Status Broadcast(float* data, size_t count, int root) override;
  Status Allgather(const float* send, size_t count, float* recv) override;
  Status AllgatherBytes(const void* send, size_t bytes, void* recv) override;
  Status Barrier() override;
  Status ReduceSum(float* data, size_t count, int root) override;
  // REQUIRES: block <= INT_MAX.
  Status ReduceScatterSum(const float* send, float* recv, size_t block) override;
  Status AllreduceSumHalf(uint16_t* data, size_t count) override;
  // MPI_Iallreduce / MPI_Wait. REQUIRES: count <= INT_MAX.
  Result<uint64_t> StartAllreduceSum(float* data, size_t count) override;
  Status Wait(uint64_t request) override;
  using Collective::AllreduceSum;
  using Collective::Broadcast;

  // The communicator (a duplicate owned by this object), for benchmarks that compare against
  // raw MPI calls.
  MPI_Comm comm() const { return comm_; }

 private:
  MpiCollective(MPI_Comm comm, int rank, int size, MpiCollectiveOptions options)
      : comm_(comm), rank_(rank), size_(size), options_(options) {}
  Status CreateHalfSum();

  Status AllreduceWhole(float* data, size_t count);
  Status AllreduceSegmented(float* data, size_t count, size_t segment);

  MPI_Comm comm_;
  MPI_Datatype half_type_ = MPI_DATATYPE_NULL;  // two bytes, one binary16
  MPI_Op half_sum_ = MPI_OP_NULL;               // adds halves in float
  int rank_;
  int size_;
  MpiCollectiveOptions options_;
  uint64_t next_request_ = 0;
  std::vector<std::pair<uint64_t, MPI_Request>> pending_;
};

// "MPI_Allreduce: <MPI's error string>" for a failed MPI call.
Status MpiStatus(const char* operation, int mpi_error);

}  // namespace dljob::trainer
