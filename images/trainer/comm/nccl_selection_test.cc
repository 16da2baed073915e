#include "images/trainer/comm/nccl_selection.h"

#include <gtest/gtest.h>

namespace dljob::trainer {
namespace {

const CudaDevices kNoGpu{0, "cudaGetDeviceCount: no CUDA-capable device is detected"};
const CudaDevices kTwoGpus{2, ""};

TEST(ChooseCollective, AutoPicksNcclOnlyWithBuiltInNcclAndADevice) {
  EXPECT_EQ(*ChooseCollective("auto", true, kTwoGpus), CollectiveKind::kNccl);
  EXPECT_EQ(*ChooseCollective("auto", true, kNoGpu), CollectiveKind::kMpi);
  EXPECT_EQ(*ChooseCollective("auto", false, kTwoGpus), CollectiveKind::kMpi);
  EXPECT_EQ(*ChooseCollective("auto", false, kNoGpu), CollectiveKind::kMpi);
}

TEST(ChooseCollective, MpiIsAlwaysAvailable) {
  EXPECT_EQ(*ChooseCollective("mpi", true, kTwoGpus), CollectiveKind::kMpi);
  EXPECT_EQ(*ChooseCollective("mpi", false, kNoGpu), CollectiveKind::kMpi);
}

TEST(ChooseCollective, NcclWithoutADeviceSaysWhy) {
  Result<CollectiveKind> kind = ChooseCollective("nccl", true, kNoGpu);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(kind.status().message(),
            "--collective=nccl needs a CUDA device, and none is usable (cudaGetDeviceCount: no "
            "CUDA-capable device is detected)");
  EXPECT_EQ(ChooseCollective("nccl", true, CudaDevices{}).status().message(),
            "--collective=nccl needs a CUDA device, and none is usable (no CUDA device found)");
}

TEST(ChooseCollective, NcclNotBuiltIn) {
  Result<CollectiveKind> kind = ChooseCollective("nccl", false, kTwoGpus);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().message(),
            "--collective=nccl: this dljob-train was built without CUDA and NCCL");
  EXPECT_EQ(*ChooseCollective("nccl", true, kTwoGpus), CollectiveKind::kNccl);
}

TEST(ChooseCollective, UnknownValue) {
  Result<CollectiveKind> kind = ChooseCollective("gloo", true, kTwoGpus);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(kind.status().message().find("known: auto, mpi, nccl"), std::string::npos);
}

TEST(ProbeCudaDevices, ReportsAReasonWhenThereIsNoDevice) {
  // Runs everywhere: on a GPU machine it finds devices, elsewhere it must not crash and says why.
  const CudaDevices devices = ProbeCudaDevices();
  EXPECT_GE(devices.count, 0);
  EXPECT_EQ(devices.count == 0, !devices.error.empty());
  if (!NcclBuiltIn()) EXPECT_EQ(devices.count, 0);
}

}  // namespace
}  // namespace dljob::trainer
