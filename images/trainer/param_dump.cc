#include "images/trainer/param_dump.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <torch/torch.h>

namespace dljob::trainer {

std::string DumpPath(const std::string& base, int rank, int world_size) {
  return world_size == 1 ? base : base + ".rank" + std::to_string(rank);
}

Status DumpParameters(Model& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Unavailable("cannot write \"" + path + "\": " + std::strerror(errno));
  for (const auto& item : model.named_parameters()) {
    torch::Tensor p = item.value().detach().to(torch::kCPU).contiguous();
    if (p.scalar_type() != torch::kFloat32) {
      return Status::InvalidArgument("parameter " + item.key() + " is not float32");
    }
    out.write(reinterpret_cast<const char*>(p.data_ptr<float>()),
              static_cast<std::streamsize>(p.numel() * sizeof(float)));
  }
  out.close();
  if (!out) return Status::Unavailable("error writing \"" + path + "\"");
  return Status::Ok();
}

}  // namespace dljob::trainer
