// dljob-train: flags -> config -> collective backend -> MPI -> RunTraining. Everything
// interesting lives in the library (training_run.h, trainer.h, models/, data/, comm/); this file
// composes it. Exit codes and error lines: job_errors.h.
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "images/trainer/comm/builtin_backends.h"
#include "images/trainer/comm/hierarchical_collective.h"
#include "images/trainer/comm/mpi_environment.h"
#include "images/trainer/flags.h"
#include "images/trainer/job_errors.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/training_run.h"

namespace dljob::trainer {
namespace {

constexpr const char* kCollectiveHint =
    "pass --collective=mpi (or auto) to communicate over MPI on the CPU, or run on a node with "
    "a CUDA GPU and a dljob-train built with CUDA and NCCL";

// This rank's Collective: MPI's two-level allreduce for --allreduce_alg=hierarchical (the
// backend is then MPI), else the chosen backend over all ranks. On failure prints why and sets
// *exit_code: a hierarchical grid that does not fit the ranks fails on every rank alike (rank 0
// says why, exit 2); a backend that fails on some rank takes the job down (exit 1).
std::unique_ptr<Collective> ConnectRanks(const TrainConfig& config, CollectiveBackend& backend,
                                         const MpiEnvironment& mpi, int* exit_code) {
  if (config.allreduce_alg == AllreduceAlg::kHierarchical) {
    Result<std::unique_ptr<Collective>> created =
        MakeHierarchicalMpiCollective(MPI_COMM_WORLD, config.hierarchical_local_size);
    if (created.ok()) return std::move(*created);
    // The message says what to pass instead.
    if (mpi.world_rank() == 0) {
      PrintError("--allreduce_alg=hierarchical: " + created.status().message());
    }
    *exit_code = kUsageExitCode;
    return nullptr;
  }
  Result<std::unique_ptr<Collective>> created =
      backend.Create(MPI_COMM_WORLD, LocalRankFromEnvironment());
  if (created.ok()) return std::move(*created);
  PrintError(RankPrefix(mpi.world_rank()) + created.status().message());
  if (mpi.world_size() > 1) AbortAllRanks(kRuntimeExitCode);
  *exit_code = kRuntimeExitCode;
  return nullptr;
}

int RunMain(int argc, char** argv) {
  const ModelRegistry models = BuiltinModels();
  const bool first_rank = RankFromEnvironment() == 0;  // print usage errors once, not per rank
  std::ostringstream discard;
  TrainConfig config;
  if (auto code = ParseFlags(argc, argv, models.Names(), &config, first_rank ? std::cout : discard,
                             first_rank ? std::cerr : discard)) {
    return *code;
  }
  Result<const ModelInfo*> info = models.Find(config.model);
  if (!info.ok()) {
    if (first_rank) {
      PrintError(info.status().message(), UnknownModelHint(config.model, models.Names()));
    }
    return kUsageExitCode;
  }
  // Chosen before MPI starts, so that a refused --collective=nccl exits like any usage error.
  CollectiveRegistry backends = BuiltinCollectiveBackends();
  Result<CollectiveBackend*> backend = backends.Choose(RequestedCollective(config));
  if (!backend.ok()) {
    if (first_rank) PrintError(backend.status().message(), kCollectiveHint);
    return kUsageExitCode;
  }
  Result<std::unique_ptr<MpiEnvironment>> mpi =
      MpiEnvironment::Create(&argc, &argv, NeedsMpiThreadMultiple(config));
  if (!mpi.ok()) {
    PrintError(mpi.status().message());
    return kRuntimeExitCode;
  }
  int exit_code = 0;
  std::unique_ptr<Collective> collective = ConnectRanks(config, **backend, **mpi, &exit_code);
  if (!collective) return exit_code;
  return RunTraining(config, **info, *collective);
}

}  // namespace
}  // namespace dljob::trainer

int main(int argc, char** argv) {
  try {
    return dljob::trainer::RunMain(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "dljob-train: error: " << e.what() << "\n";
    return 1;
  }
}
