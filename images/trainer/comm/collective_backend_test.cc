// The registry's choice (fakes in a fixed order), NCCL's Enabled() messages, and the built-in
// registry on this machine. The --collective flag end to end: tests/collective_flag_test.sh.
#include "images/trainer/comm/collective_backend.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "images/trainer/comm/builtin_backends.h"
#include "images/trainer/comm/loopback_collective.h"

namespace dljob::trainer {
namespace {

// Enabled() answers `enabled` and counts the calls; Create makes a one-rank loopback.
class FakeBackend : public CollectiveBackend {
 public:
  FakeBackend(CollectiveChoice kind, Status enabled, int* asked)
      : kind_(kind), enabled_(std::move(enabled)), asked_(asked) {}
  CollectiveChoice kind() const override { return kind_; }
  Status Enabled() override {
    ++*asked_;
    return enabled_;
  }
  Result<std::unique_ptr<Collective>> Create(MPI_Comm, int) override {
    return std::unique_ptr<Collective>(std::make_unique<LoopbackCollective>());
  }

 private:
  CollectiveChoice kind_;
  Status enabled_;
  int* asked_;
};

struct Fakes {
  int nccl_asked = 0;
  int mpi_asked = 0;
  CollectiveRegistry registry;
  CollectiveBackend* nccl = nullptr;
  CollectiveBackend* mpi = nullptr;

  explicit Fakes(bool gpu) {
    auto nccl_backend = std::make_unique<FakeBackend>(
        CollectiveChoice::kNccl,
        gpu ? Status::Ok() : NcclDeviceCheck({0, "cudaGetDeviceCount: no CUDA-capable device"}),
        &nccl_asked);
    auto mpi_backend =
        std::make_unique<FakeBackend>(CollectiveChoice::kMpi, Status::Ok(), &mpi_asked);
    nccl = nccl_backend.get();
    mpi = mpi_backend.get();
    registry.Add(std::move(nccl_backend));
    registry.Add(std::move(mpi_backend));
  }
};

TEST(CollectiveRegistry, AutoPicksTheFirstEnabledBackend) {
  Fakes gpu(true);
  EXPECT_EQ(*gpu.registry.Choose(CollectiveChoice::kAuto), gpu.nccl);
  EXPECT_EQ(gpu.mpi_asked, 0);  // stops at the first enabled one
  Fakes cpu(false);
  EXPECT_EQ(*cpu.registry.Choose(CollectiveChoice::kAuto), cpu.mpi);
  EXPECT_EQ(cpu.nccl_asked, 1);
}

TEST(CollectiveRegistry, MpiIsChosenWithoutAskingNccl) {
  for (bool gpu : {true, false}) {
    Fakes f(gpu);
    EXPECT_EQ(*f.registry.Choose(CollectiveChoice::kMpi), f.mpi);
    EXPECT_EQ(f.nccl_asked, 0) << "--collective=mpi must not touch the CUDA runtime";
  }
}

TEST(CollectiveRegistry, NamedBackendThatCannotRunSaysWhy) {
  Fakes cpu(false);
  Result<CollectiveBackend*> chosen = cpu.registry.Choose(CollectiveChoice::kNccl);
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(chosen.status().message(),
            "--collective=nccl needs a CUDA device, and none is usable (cudaGetDeviceCount: no "
            "CUDA-capable device)");
  Fakes gpu(true);
  EXPECT_EQ(*gpu.registry.Choose(CollectiveChoice::kNccl), gpu.nccl);
}

TEST(CollectiveRegistry, MissingBackendAndEmptyRegistry) {
  CollectiveRegistry empty;
  EXPECT_EQ(empty.Choose(CollectiveChoice::kMpi).status().message(),
            "--collective=mpi: this dljob-train has no such backend");
  EXPECT_EQ(empty.Choose(CollectiveChoice::kAuto).status().code(), StatusCode::kFailedPrecondition);
}

TEST(CollectiveRegistry, ChosenBackendCreatesTheCollective) {
  Fakes cpu(false);
  Result<CollectiveBackend*> chosen = cpu.registry.Choose(CollectiveChoice::kAuto);
  ASSERT_TRUE(chosen.ok());
  Result<std::unique_ptr<Collective>> collective = (*chosen)->Create(MPI_COMM_NULL, 0);
  ASSERT_TRUE(collective.ok());
  EXPECT_EQ((*collective)->size(), 1);
}

TEST(NcclDeviceCheck, WithoutADeviceSaysWhy) {
  EXPECT_TRUE(NcclDeviceCheck({2, ""}).ok());
  const Status none =
      NcclDeviceCheck({0, "cudaGetDeviceCount: no CUDA-capable device is detected"});
  EXPECT_EQ(none.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(none.message(),
            "--collective=nccl needs a CUDA device, and none is usable (cudaGetDeviceCount: no "
            "CUDA-capable device is detected)");
  EXPECT_EQ(NcclDeviceCheck(CudaDevices{}).message(),
            "--collective=nccl needs a CUDA device, and none is usable (no CUDA device found)");
}

TEST(BuiltinCollectiveBackends, NcclFirstThenMpi) {
  CollectiveRegistry builtin = BuiltinCollectiveBackends();
  EXPECT_EQ(builtin.kinds(),
            (std::vector<CollectiveChoice>{CollectiveChoice::kNccl, CollectiveChoice::kMpi}));
  Result<CollectiveBackend*> mpi = builtin.Choose(CollectiveChoice::kMpi);
  ASSERT_TRUE(mpi.ok());
  EXPECT_EQ((*mpi)->kind(), CollectiveChoice::kMpi);
  // On this machine: auto is NCCL exactly when --collective=nccl is allowed; a refusal names the
  // flag and says why (no device here, or a binary built without NCCL).
  Result<CollectiveBackend*> nccl = builtin.Choose(CollectiveChoice::kNccl);
  Result<CollectiveBackend*> automatic = builtin.Choose(CollectiveChoice::kAuto);
  ASSERT_TRUE(automatic.ok());
  EXPECT_EQ((*automatic)->kind(), nccl.ok() ? CollectiveChoice::kNccl : CollectiveChoice::kMpi);
  if (!nccl.ok()) {
    EXPECT_EQ(nccl.status().message().rfind("--collective=nccl", 0), 0u) << nccl.status().message();
    EXPECT_TRUE(nccl.status().message().find("needs a CUDA device") != std::string::npos ||
                nccl.status().message().find("built without CUDA and NCCL") != std::string::npos)
        << nccl.status().message();
  }
}

TEST(ProbeCudaDevices, ReportsAReasonWhenThereIsNoDevice) {
  // Runs everywhere: on a GPU machine it finds devices, elsewhere it must not crash and says why.
  const CudaDevices devices = ProbeCudaDevices();
  EXPECT_GE(devices.count, 0);
  EXPECT_EQ(devices.count == 0, !devices.error.empty());
  EXPECT_EQ(NcclDeviceCheck(devices).ok(), devices.count > 0);
}

}  // namespace
}  // namespace dljob::trainer
