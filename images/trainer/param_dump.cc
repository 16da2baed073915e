#include "images/trainer/param_dump.h"

#include <torch/torch.h>

#include "base/env.h"

namespace dljob::trainer {

std::string DumpPath(const std::string& base, int rank, int world_size) {
  return world_size == 1 ? base : base + ".rank" + std::to_string(rank);
}

Status DumpParameters(Model& model, const std::string& path) {
  std::string bytes;
  for (const auto& item : model.named_parameters()) {
    torch::Tensor p = item.value().detach().to(torch::kCPU).contiguous();
    if (p.scalar_type() != torch::kFloat32) {
      return Status::InvalidArgument("parameter " + item.key() + " is not float32");
    }
    bytes.append(reinterpret_cast<const char*>(p.data_ptr<float>()),
                 static_cast<size_t>(p.numel()) * sizeof(float));
  }
  return DefaultEnv().WriteFileAtomically(path, bytes);
}

}  // namespace dljob::trainer
