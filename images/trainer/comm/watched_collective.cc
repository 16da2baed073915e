#include "images/trainer/comm/watched_collective.h"

#include <algorithm>
#include <cstring>

namespace dljob::trainer {

void WatchedCollective::Enter(const char* operation) {
  const Clock::time_point now = Clock::now();
  MutexLock lock(mutex_);
  ++collectives_;
  waiting_ = true;
  operation_ = operation;
  since_ = now;
}

void WatchedCollective::Leave() {
  MutexLock lock(mutex_);
  waiting_ = false;
}

Status WatchedCollective::AllreduceSum(float* data, size_t count) {
  Enter("allreduce");
  Status s = inner_.AllreduceSum(data, count);
  Leave();
  return s;
}

Status WatchedCollective::Broadcast(float* data, size_t count, int root) {
  Enter("broadcast");
  Status s = inner_.Broadcast(data, count, root);
  Leave();
  return s;
}

Status WatchedCollective::Allgather(const float* send, size_t count, float* recv) {
  Enter("allgather");
  Status s = inner_.Allgather(send, count, recv);
  Leave();
  return s;
}

Status WatchedCollective::AllgatherBytes(const void* send, size_t bytes, void* recv) {
  Enter("allgather");
  Status s = inner_.AllgatherBytes(send, bytes, recv);
  Leave();
  return s;
}

Status WatchedCollective::Barrier() {
  Enter("barrier");
  Status s = inner_.Barrier();
  Leave();
  return s;
}

Status WatchedCollective::ReduceSum(float* data, size_t count, int root) {
  Enter("reduce");
  Status s = inner_.ReduceSum(data, count, root);
  Leave();
  return s;
}

Status WatchedCollective::ReduceScatterSum(const float* send, float* recv, size_t block) {
  Enter("reduce-scatter");
  Status s = inner_.ReduceScatterSum(send, recv, block);
  Leave();
  return s;
}

Status WatchedCollective::AllreduceSumHalf(uint16_t* data, size_t count) {
  Enter("allreduce (fp16)");
  Status s = inner_.AllreduceSumHalf(data, count);
  Leave();
  return s;
}

// Starting never blocks; the wait is what the detector watches.
Result<uint64_t> WatchedCollective::StartAllreduceSum(float* data, size_t count) {
  return inner_.StartAllreduceSum(data, count);
}

Status WatchedCollective::Wait(uint64_t request) {
  Enter("allreduce");
  Status s = inner_.Wait(request);
  Leave();
  return s;
}

void WatchedCollective::SetStep(int64_t step) {
  MutexLock lock(mutex_);
  step_ = step;
}

void WatchedCollective::Annotate(std::string_view purpose) {
  MutexLock lock(mutex_);
  const size_t n = std::min(purpose.size(), sizeof(purpose_) - 1);
  std::memcpy(purpose_, purpose.data(), n);
  purpose_[n] = '\0';
}

WatchedCollective::Progress WatchedCollective::Snapshot() const {
  Progress p;
  MutexLock lock(mutex_);
  p.record.rank = inner_.rank();
  p.record.collectives = collectives_;
  p.record.waiting = waiting_;
  p.record.step = step_;
  if (*operation_ != '\0') {
    p.record.what = operation_;
    if (purpose_[0] != '\0') p.record.what += std::string(" of ") + purpose_;
  }
  p.since = since_;
  return p;
}

}  // namespace dljob::trainer
