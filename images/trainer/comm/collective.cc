#include "images/trainer/comm/collective.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <torch/torch.h>

#include "images/trainer/comm/half.h"

namespace dljob::trainer {
namespace {

// Runs `op` on a contiguous CPU float view of `tensor`, writing the result back if a staging
// copy was needed.
template <typename Op>
Status WithCpuBuffer(torch::Tensor& tensor, Op op) {
  if (tensor.scalar_type() != torch::kFloat32) {
    return Status::InvalidArgument("collective: tensor must be float32, got " +
                                   std::string(c10::toString(tensor.scalar_type())));
  }
  if (tensor.device().is_cpu() && tensor.is_contiguous()) {
    return op(tensor.data_ptr<float>(), static_cast<size_t>(tensor.numel()));
  }
  torch::Tensor staged = tensor.to(torch::kCPU).contiguous().clone();
  Status status = op(staged.data_ptr<float>(), static_cast<size_t>(staged.numel()));
  if (status.ok()) {
    torch::NoGradGuard no_grad;
    tensor.copy_(staged);
  }
  return status;
}

}  // namespace

Status Collective::AllreduceSum(torch::Tensor& tensor) {
  return WithCpuBuffer(tensor, [this](float* p, size_t n) { return AllreduceSum(p, n); });
}

Status Collective::Broadcast(torch::Tensor& tensor, int root) {
  return WithCpuBuffer(tensor, [this, root](float* p, size_t n) { return Broadcast(p, n, root); });
}

Status Collective::ReduceSum(float* data, size_t count, int root) {
  if (root < 0 || root >= size()) {
    return Status::InvalidArgument("reduce: root " + std::to_string(root) + " is not a rank of " +
                                   std::to_string(size()));
  }
  return AllreduceSum(data, count);
}

Status Collective::ReduceScatterSum(const float* send, float* recv, size_t block) {
  if ((send == nullptr || recv == nullptr) && block > 0) {
    return Status::InvalidArgument("reduce-scatter: null buffer");
  }
  std::vector<float> sum(send, send + block * static_cast<size_t>(size()));
  if (Status s = AllreduceSum(sum.data(), sum.size()); !s.ok()) return s;
  std::copy_n(sum.begin() + static_cast<ptrdiff_t>(block * static_cast<size_t>(rank())), block,
              recv);
  return Status::Ok();
}

Status Collective::AllreduceSumHalf(uint16_t* data, size_t count) {
  if (data == nullptr && count > 0) return Status::InvalidArgument("allreduce (fp16): null buffer");
  std::vector<float> sum(count);
  HalvesToFloatsScaled(data, sum.data(), count, 1.0f);
  if (Status s = AllreduceSum(sum.data(), count); !s.ok()) return s;
  FloatsToHalves(sum.data(), data, count);
  return Status::Ok();
}

Status Collective::AllgatherBytes(const void* send, size_t bytes, void* recv) {
  if ((send == nullptr || recv == nullptr) && bytes > 0) {
    return Status::InvalidArgument("allgather (bytes): null buffer");
  }
  const size_t floats = (bytes + sizeof(float) - 1) / sizeof(float);
  std::vector<float> mine(floats, 0.0f);
  std::vector<float> all(floats * static_cast<size_t>(size()));
  if (bytes > 0) std::memcpy(mine.data(), send, bytes);
  if (Status s = Allgather(mine.data(), floats, all.data()); !s.ok()) return s;
  if (bytes == 0) return Status::Ok();
  for (size_t r = 0; r < static_cast<size_t>(size()); ++r) {
    std::memcpy(static_cast<char*>(recv) + r * bytes, all.data() + r * floats, bytes);
  }
  return Status::Ok();
}

Result<uint64_t> Collective::StartAllreduceSum(float* data, size_t count) {
  const uint64_t id = next_request_++;
  finished_.emplace_back(id, AllreduceSum(data, count));
  return id;
}

Status Collective::Wait(uint64_t request) {
  for (auto it = finished_.begin(); it != finished_.end(); ++it) {
    if (it->first != request) continue;
    Status status = std::move(it->second);
    finished_.erase(it);
    return status;
  }
  return Status::InvalidArgument("wait: unknown request " + std::to_string(request));
}

bool AllRanksOk(Collective& collective, const Status& local, int* first_failed_rank,
                Status* comm_status) {
  std::vector<float> failed(static_cast<size_t>(collective.size()), 0.0f);
  failed[static_cast<size_t>(collective.rank())] = local.ok() ? 0.0f : 1.0f;
  *comm_status = collective.AllreduceSum(failed.data(), failed.size());
  *first_failed_rank = -1;
  if (!comm_status->ok()) {
    if (!local.ok()) *first_failed_rank = collective.rank();
    return false;
  }
  for (size_t r = 0; r < failed.size(); ++r) {
    if (failed[r] != 0.0f) {
      *first_failed_rank = static_cast<int>(r);
      return false;
    }
  }
  return true;
}

}  // namespace dljob::trainer
