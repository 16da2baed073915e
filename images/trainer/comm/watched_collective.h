// WatchedCollective: a Collective that records its own progress for the stall detector.
//
// It wraps another Collective (borrowed, must outlive it) and forwards every operation to it,
// noting before each one which operation it is, the step and purpose the caller gave
// (SetStep/Annotate), and when it started; and after it, that it is no longer waiting. The stall
// watchdog (comm/mpi_stall_watchdog.h) reads that from its own thread with Snapshot() and sends
// it to the other ranks as heartbeats. A non-blocking allreduce counts as waiting only inside
// Wait.
//
// Thread-safety: the Collective operations are thread-compatible, as for any Collective;
// Snapshot() may be called from any thread at any time (a mutex guards the shared record; the
// forwarded operation runs outside it).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/mutex.h"
#include "images/trainer/comm/collective.h"
#include "images/trainer/comm/stall_detector.h"

namespace dljob::trainer {

class WatchedCollective : public Collective {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WatchedCollective(Collective& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string name() const override { return inner_.name(); }

  Status AllreduceSum(float* data, size_t count) override;
  Status Broadcast(float* data, size_t count, int root) override;
  Status Allgather(const float* send, size_t count, float* recv) override;
  Status AllgatherBytes(const void* send, size_t bytes, void* recv) override;
  Status Barrier() override;
  Status ReduceSum(float* data, size_t count, int root) override;
  Status ReduceScatterSum(const float* send, float* recv, size_t block) override;
  Status AllreduceSumHalf(uint16_t* data, size_t count) override;
  Result<uint64_t> StartAllreduceSum(float* data, size_t count) override;
  Status Wait(uint64_t request) override;
  using Collective::AllreduceSum;
  using Collective::Broadcast;

  void SetStep(int64_t step) override;
  void Annotate(std::string_view purpose) override;

  struct Progress {
    ProgressRecord record;      // record.what: "<operation> of <purpose>"
    Clock::time_point since{};  // when the current wait began (record.waiting)
  };
  Progress Snapshot() const;

 private:
  // Marks the start and end of a blocking operation (`operation` is a string literal).
  void Enter(const char* operation);
  void Leave();

  Collective& inner_;
  mutable Mutex mutex_;
  int64_t collectives_ GUARDED_BY(mutex_) = 0;
  bool waiting_ GUARDED_BY(mutex_) = false;
  int64_t step_ GUARDED_BY(mutex_) = 0;
  const char* operation_ GUARDED_BY(mutex_) = "";
  char purpose_[64] GUARDED_BY(mutex_) = {0};
  Clock::time_point since_ GUARDED_BY(mutex_){};
};

}  // namespace dljob::trainer
