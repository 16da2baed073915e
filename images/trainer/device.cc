#include "images/trainer/device.h"

#include <cstdlib>

#include <torch/cuda.h>
#include <torch/torch.h>

namespace dljob::trainer {

DeviceChoice PickDevice(int local_rank) {
  DeviceChoice choice;
  if (!torch::cuda::is_available()) {
    choice.description = "cpu (no GPU found)";
    return choice;
  }
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  const auto index = static_cast<c10::DeviceIndex>(local_rank % count);
  choice.device = torch::Device(torch::kCUDA, index);
  choice.description = "cuda:" + std::to_string(index) + " (" + std::to_string(count) +
                       (count == 1 ? " GPU found)" : " GPUs found)");
  return choice;
}

int ApplyThreadSetting() {
  if (const char* value = std::getenv("OMP_NUM_THREADS"); value != nullptr) {
    char* end = nullptr;
    long threads = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && threads > 0)
      torch::set_num_threads(static_cast<int>(threads));
  }
  return torch::get_num_threads();
}

}  // namespace dljob::trainer
