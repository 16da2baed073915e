// LoopbackCollective: a Collective of exactly one rank, in process.
//
// Every operation is the identity (the sum over one rank is the rank's own buffer), which is
// exactly what a 1-rank MPI job computes. Tests use it to run the Trainer without MPI. It counts
// the operations it served so tests can check that the trainer communicates when it should.
//
// Thread-safety: thread-compatible.
#pragma once

#include <cstdint>

#include "images/trainer/comm/collective.h"

namespace dljob::trainer {

class LoopbackCollective : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "loopback"; }

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

  int64_t allreduce_calls() const { return allreduce_calls_; }
  int64_t broadcast_calls() const { return broadcast_calls_; }
  int64_t reduce_calls() const { return reduce_calls_; }
  int64_t allreduce_half_calls() const { return allreduce_half_calls_; }
  int64_t allgather_bytes_calls() const { return allgather_bytes_calls_; }

 private:
  int64_t allreduce_calls_ = 0;
  int64_t broadcast_calls_ = 0;
  int64_t reduce_calls_ = 0;
  int64_t allreduce_half_calls_ = 0;
  int64_t allgather_bytes_calls_ = 0;
};

}  // namespace dljob::trainer
