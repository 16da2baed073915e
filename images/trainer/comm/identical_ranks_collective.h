// IdenticalRanksCollective: a test fake that plays `world` ranks which all hold the same values.
//
// An allreduce sum multiplies by the world size (exact for powers of two), so an average gives the
// values back (ReduceSum, ReduceScatterSum and AllreduceSumHalf likewise multiply, the half sum
// rounded to half once; AllgatherBytes repeats this rank's bytes `world` times): a Trainer on
// this collective must compute exactly what it computes on one rank, while still sending every
// message a multi-rank job sends. It counts the operations it served and can be told to fail
// from the n-th allreduce on (a broken communicator). Header-only, for tests. Thread-compatible.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "images/trainer/comm/collective.h"
#include "images/trainer/comm/half.h"

namespace dljob::trainer {

class IdenticalRanksCollective : public Collective {
 public:
  explicit IdenticalRanksCollective(int world) : world_(world) {}
  int rank() const override { return 0; }
  int size() const override { return world_; }
  std::string name() const override { return "identical-ranks"; }
  Status AllreduceSum(float* data, size_t count) override {
    if (Broken()) return Status::Unavailable("fake: communicator broken");
    ++allreduce_calls_;
    allreduce_floats_ += static_cast<int64_t>(count);
    for (size_t i = 0; i < count; ++i) data[i] *= static_cast<float>(world_);
    return Status::Ok();
  }
  Status Broadcast(float*, size_t, int) override {
    ++broadcast_calls_;
    return Status::Ok();
  }
  Status Allgather(const float* send, size_t count, float* recv) override {
    for (int r = 0; r < world_; ++r) {
      for (size_t i = 0; i < count; ++i) recv[static_cast<size_t>(r) * count + i] = send[i];
    }
    return Status::Ok();
  }
  Status AllgatherBytes(const void* send, size_t bytes, void* recv) override {
    ++allgather_bytes_calls_;
    if (bytes == 0) return Status::Ok();
    for (int r = 0; r < world_; ++r) {
      std::memcpy(static_cast<char*>(recv) + static_cast<size_t>(r) * bytes, send, bytes);
    }
    return Status::Ok();
  }
  Status Barrier() override { return Status::Ok(); }
  Status ReduceSum(float* data, size_t count, int /*root*/) override {
    ++reduce_calls_;
    for (size_t i = 0; i < count; ++i) data[i] *= static_cast<float>(world_);
    return Status::Ok();
  }
  // This plays rank 0: its block is the first.
  Status ReduceScatterSum(const float* send, float* recv, size_t block) override {
    for (size_t i = 0; i < block; ++i) recv[i] = send[i] * static_cast<float>(world_);
    return Status::Ok();
  }
  Status AllreduceSumHalf(uint16_t* data, size_t count) override {
    if (Broken()) return Status::Unavailable("fake: communicator broken");
    ++allreduce_half_calls_;
    for (size_t i = 0; i < count; ++i) {
      data[i] = FloatToHalf(HalfToFloat(data[i]) * static_cast<float>(world_));
    }
    return Status::Ok();
  }
  using Collective::AllreduceSum;
  using Collective::Broadcast;

  // Allreduces (float or half) from the n-th (0-based) on fail.
  void FailFrom(int64_t n) { fail_from_ = n; }
  int64_t allreduce_calls() const { return allreduce_calls_; }
  int64_t allreduce_floats() const { return allreduce_floats_; }
  int64_t broadcast_calls() const { return broadcast_calls_; }
  int64_t reduce_calls() const { return reduce_calls_; }
  int64_t allreduce_half_calls() const { return allreduce_half_calls_; }
  int64_t allgather_bytes_calls() const { return allgather_bytes_calls_; }

 private:
  bool Broken() const {
    return fail_from_ >= 0 && allreduce_calls_ + allreduce_half_calls_ >= fail_from_;
  }

  int world_;
  int64_t fail_from_ = -1;
  int64_t allreduce_calls_ = 0;
  int64_t allreduce_floats_ = 0;
  int64_t broadcast_calls_ = 0;
  int64_t reduce_calls_ = 0;
  int64_t allreduce_half_calls_ = 0;
  int64_t allgather_bytes_calls_ = 0;
};

}  // namespace dljob::trainer
