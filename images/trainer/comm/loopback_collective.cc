#include "images/trainer/comm/loopback_collective.h"

#include <cstring>

namespace dljob::trainer {

Status LoopbackCollective::AllreduceSum(float* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce: null buffer");
  ++allreduce_calls_;
  return Status::Ok();
}

Status LoopbackCollective::Broadcast(float* data, size_t count, int root) {
  if (root != 0) {
    return Status::InvalidArgument("broadcast: root " + std::to_string(root) +
                                   " is not a rank of a 1-rank collective");
  }
  if (data == nullptr && count > 0) return Status::InvalidArgument("broadcast: null buffer");
  ++broadcast_calls_;
  return Status::Ok();
}

Status LoopbackCollective::Allgather(const float* send, size_t count, float* recv) {
  if ((send == nullptr || recv == nullptr) && count > 0) {
    return Status::InvalidArgument("allgather: null buffer");
  }
  if (count > 0) std::memmove(recv, send, count * sizeof(float));
  return Status::Ok();
}

Status LoopbackCollective::AllgatherBytes(const void* send, size_t bytes, void* recv) {
  if ((send == nullptr || recv == nullptr) && bytes > 0) {
    return Status::InvalidArgument("allgather (bytes): null buffer");
  }
  ++allgather_bytes_calls_;
  if (bytes > 0) std::memmove(recv, send, bytes);
  return Status::Ok();
}

Status LoopbackCollective::Barrier() { return Status::Ok(); }

Status LoopbackCollective::ReduceSum(float* data, size_t count, int root) {
  if (root != 0) {
    return Status::InvalidArgument("reduce: root " + std::to_string(root) +
                                   " is not a rank of a 1-rank collective");
  }
  if (data == nullptr && count > 0) return Status::InvalidArgument("reduce: null buffer");
  ++reduce_calls_;
  return Status::Ok();
}

Status LoopbackCollective::ReduceScatterSum(const float* send, float* recv, size_t block) {
  if ((send == nullptr || recv == nullptr) && block > 0) {
    return Status::InvalidArgument("reduce-scatter: null buffer");
  }
  if (block > 0) std::memmove(recv, send, block * sizeof(float));
  return Status::Ok();
}

Status LoopbackCollective::AllreduceSumHalf(uint16_t* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce (fp16): null buffer");
  ++allreduce_half_calls_;
  return Status::Ok();
}

}  // namespace dljob::trainer
