// HierarchicalCollective: a two-level allreduce over nodes (Horovod's hierarchical allreduce).
//
// The ranks form a grid: `local` connects the ranks of one node (fast shared memory or NVLink),
// `cross` connects the ranks that have the same local rank on every node (the network). An
// AllreduceSum runs as
//   1. local ReduceScatterSum: each of the L local ranks gets the node's sum of one 1/L block,
//   2. cross AllreduceSum of that block (only 1/L of the data crosses the network, and the L
//      local ranks use L network paths at once),
//   3. local Allgather of the blocks, so every rank holds the whole sum.
// A count not divisible by L is padded with zeros to the next multiple. Long buffers are reduced
// in chunks of `chunk_floats` so the scratch stays small and cache-resident. Every other
// operation (Broadcast, Allgather, AllgatherBytes, Barrier, ReduceSum, ReduceScatterSum,
// AllreduceSumHalf, the non-blocking pair) goes to `world` unchanged, so rank() and size() are
// world's.
//
// REQUIRES: every node has the same number of ranks; local.size() * cross.size() ==
// world.size(); all three are over the same processes. MakeHierarchicalMpiCollective builds the
// three MPI communicators and checks this.
//
// Ownership: owns the three Collectives. Thread-compatible, like every Collective.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

class HierarchicalCollective : public Collective {
 public:
  // Reduce in chunks of this many floats by default (4 MB), as MpiCollective segments.
  static constexpr size_t kDefaultChunkFloats = size_t{1} << 20;

  HierarchicalCollective(std::unique_ptr<Collective> world, std::unique_ptr<Collective> local,
                         std::unique_ptr<Collective> cross,
                         size_t chunk_floats = kDefaultChunkFloats);

  int rank() const override { return world_->rank(); }
  int size() const override { return world_->size(); }
  // "<world's name>-hierarchical(<nodes>x<ranks per node>)", e.g. "mpi-hierarchical(2x2)".
  std::string name() const override;
  int local_size() const { return local_->size(); }
  int nodes() const { return cross_->size(); }

  Status AllreduceSum(float* data, size_t count) override;
  Status Broadcast(float* data, size_t count, int root) override;
  Status Allgather(const float* send, size_t count, float* recv) override;
  Status AllgatherBytes(const void* send, size_t bytes, void* recv) override;
  Status Barrier() override;
  Status ReduceSum(float* data, size_t count, int root) override;
  Status ReduceScatterSum(const float* send, float* recv, size_t block) override;
  Status AllreduceSumHalf(uint16_t* data, size_t count) override;
  using Collective::AllreduceSum;
  using Collective::Broadcast;

 private:
  Status AllreduceChunk(float* data, size_t count);

  std::unique_ptr<Collective> world_;
  std::unique_ptr<Collective> local_;
  std::unique_ptr<Collective> cross_;
  size_t chunk_floats_;
  std::vector<float> padded_;  // a chunk padded to a multiple of the local size
  std::vector<float> block_;   // this rank's block of the node's sum
};

// A HierarchicalCollective over `world` (usually MPI_COMM_WORLD). local_size 0: a node is the
// ranks that share memory (MPI_Comm_split_type MPI_COMM_TYPE_SHARED); local_size > 0: nodes are
// simulated as consecutive world ranks, local_size each (so one machine can test 2 nodes x 2
// ranks). Fails, on every rank alike, if the world size is not a multiple of local_size or the
// nodes have different sizes. Every rank of `world` must call it. REQUIRES: an MpiEnvironment
// outlives the result.
Result<std::unique_ptr<Collective>> MakeHierarchicalMpiCollective(MPI_Comm world, int local_size);

}  // namespace dljob::trainer
