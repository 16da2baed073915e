// Run-time choices about where and how dljob-train computes: the device and the thread count.
//
// The device is picked at run time, never at build time: a CUDA device when LibTorch sees one
// (rank's local rank modulo the device count, so each rank on a node gets its own GPU), otherwise
// the CPU. The same binary therefore runs on GPU and CPU-only machines.
#pragma once

#include <string>

#include <torch/types.h>

namespace dljob::trainer {

struct DeviceChoice {
  torch::Device device = torch::kCPU;
  std::string description;  // "cuda:1 (4 GPUs found)" or "cpu (no GPU found)"
};

DeviceChoice PickDevice(int local_rank);

// If OMP_NUM_THREADS is set to a positive integer, sets LibTorch's intra-op thread count to it.
// Returns the thread count in effect afterwards.
int ApplyThreadSetting();

}  // namespace dljob::trainer
