// dljob-train: flags -> config -> MPI, data, model -> Trainer. Everything interesting lives in
// the library (trainer.h, reporter.h, models/, data/, comm/); this file wires it together and is
// the boundary where library exceptions become an error line and an exit code.
//
// Exit codes: 0 success, 2 usage or data errors (bad flag, unknown model, missing dataset),
// 1 failures while running (MPI errors, a diverging loss, unexpected LibTorch errors).
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <torch/torch.h>

#include "images/trainer/checkpoint.h"
#include "images/trainer/comm/hierarchical_collective.h"
#include "images/trainer/comm/mpi_collective.h"
#include "images/trainer/comm/mpi_environment.h"
#include "images/trainer/comm/mpi_stall_watchdog.h"
#include "images/trainer/comm/nccl_selection.h"
#include "images/trainer/comm/timeline.h"
#include "images/trainer/comm/watched_collective.h"
#include "images/trainer/data/training_data.h"
#include "images/trainer/device.h"
#include "images/trainer/flags.h"
#include "images/trainer/models/builtin.h"
#include "images/trainer/models/compute_format.h"
#include "images/trainer/param_dump.h"
#include "images/trainer/trainer.h"
#include "images/trainer/training_state.h"

#ifdef DLJOB_HAVE_NCCL
#include "images/trainer/comm/nccl_collective.h"
#endif

namespace dljob::trainer {
namespace {

constexpr int kRuntimeExitCode = 1;
constexpr const char* kFp16Hint =
    "drop --use_fp16 to train in float32 on this machine, or run on a node with a CUDA GPU";
constexpr const char* kImagenetHint =
    "pass --data_dir=<directory or oss://bucket/prefix> with the shards `dljob data pack` "
    "wrote from a JPEG tree (one folder per class)";
constexpr const char* kDataHint =
    "install the dataset-fashion-mnist package, or pass --data_dir=<directory with the "
    "Fashion-MNIST IDX files, or a directory or oss://bucket/prefix with the shards `dljob data "
    "pack` made of them> (or --data_name=synthetic)";
constexpr const char* kCollectiveHint =
    "pass --collective=mpi (or auto) to communicate over MPI on the CPU, or run on a node with "
    "a CUDA GPU and a dljob-train built with CUDA and NCCL";

void PrintError(const std::string& message, const std::string& hint = "") {
  std::cerr << "dljob-train: error: " << message << "\n";
  if (!hint.empty()) std::cerr << "hint: " << hint << "\n";
  std::cerr.flush();
}

// Errors from ranks other than 0 say which rank they come from; rank 0's read as in a 1-rank run.
std::string RankPrefix(const Collective& c) {
  return c.rank() != 0 ? "rank " + std::to_string(c.rank()) + ": " : "";
}

// All ranks agree whether `local` failed anywhere; the lowest failing rank prints its error.
std::optional<int> ExitIfAnyRankFailed(Collective& c, const Status& local, int exit_code,
                                       const std::string& hint) {
  int first_failed = -1;
  Status comm;
  if (AllRanksOk(c, local, &first_failed, &comm)) return std::nullopt;
  if (!comm.ok()) {
    PrintError(RankPrefix(c) + comm.message());
    return kRuntimeExitCode;
  }
  if (first_failed == c.rank()) PrintError(RankPrefix(c) + local.message(), hint);
  return exit_code;
}

HeaderInfo MakeHeader(const TrainConfig& config, const TrainingData& data, const Collective& c,
                      const std::string& device, int threads, int64_t total_steps) {
  HeaderInfo h;
  h.model = config.model;
  h.dataset = data.description;
  h.per_device_batch = config.batch_size;
  h.global_batch = config.batch_size * c.size();
  h.num_batches = total_steps;
  h.num_epochs = static_cast<double>(total_steps * h.global_batch) / data.train_examples;
  h.device = device;
  h.ranks = c.size();
  h.collective = c.name();
  h.threads = threads;
  std::ostringstream optimizer;
  optimizer << "momentum (" << config.momentum << ")";
  h.optimizer = optimizer.str();
  h.learning_rate = config.learning_rate;
  return h;
}

// Rank 0 opens --checkpoint_dir and picks the newest complete checkpoint that fits this run;
// every rank learns whether that worked. Returns an exit code to stop with, or nullopt.
std::optional<int> SetUpCheckpoints(const TrainConfig& config, Collective& collective,
                                    Model& model, std::unique_ptr<CheckpointStore>* store,
                                    std::optional<Checkpoint>* resume) {
  if (config.checkpoint_dir.empty()) return std::nullopt;
  Status status;
  std::string hint;
  if (collective.rank() == 0) {
    *store = std::make_unique<CheckpointStore>(config.checkpoint_dir, config.checkpoint_keep);
    status = (*store)->Prepare();
    std::vector<std::string> warnings;
    Result<std::optional<Checkpoint>> latest =
        status.ok() ? (*store)->LoadLatest(&warnings) : Result<std::optional<Checkpoint>>(status);
    for (const std::string& w : warnings) std::cerr << "dljob-train: warning: " << w << "\n";
    if (latest.ok() && latest->has_value()) {
      const CheckpointMeta run{0, 0, 0, collective.size(), config.batch_size, config.seed,
                               config.model};
      status = CheckResumable((*latest)->meta, run);
      if (status.ok()) status = CheckMatchesModel(**latest, model, config.momentum != 0);
      if (status.ok()) *resume = std::move(*latest);
      status = status.WithContext("--checkpoint_dir=" + config.checkpoint_dir + ": checkpoint of "
                                  "step " + std::to_string((*latest)->meta.step));
      hint = "continue with the flags and rank count it was written with, or pass an empty "
             "--checkpoint_dir to start afresh";
    } else if (!latest.ok()) {
      status = latest.status().WithContext("--checkpoint_dir");
      hint = "pass a --checkpoint_dir this user can create and write";
    }
  }
  return ExitIfAnyRankFailed(collective, status, kUsageExitCode, hint);
}

// --data_format and --use_fp16, applied to a fresh model already on its device.
ModelPtr ApplyComputeFormat(const TrainConfig& config, ModelPtr model) {
  if (config.data_format == "NHWC") ToChannelsLast(*model);
  if (config.use_fp16) return std::make_shared<AutocastModel>(std::move(model));
  return model;
}

int Train(const TrainConfig& config, const ModelInfo& info, Collective& collective) {
  const int threads = ApplyThreadSetting();
  const DeviceChoice device = PickDevice(LocalRankFromEnvironment());
  const Status fp16 = config.use_fp16 ? CheckMixedPrecisionDevice(device.device) : Status::Ok();
  if (auto code = ExitIfAnyRankFailed(collective, fp16, kUsageExitCode, kFp16Hint)) return *code;
  Result<TrainingData> data = MakeTrainingData(
      {config.data_name, config.data_dir, info.input_shape, info.num_classes, collective.size(),
       collective.rank(), config.batch_size, config.seed, config.eval, config.loader_threads});
  const char* data_hint = config.data_name == "imagenet" ? kImagenetHint : kDataHint;
  if (auto code = ExitIfAnyRankFailed(collective, data.status(), kUsageExitCode, data_hint)) {
    return *code;
  }
  const int64_t steps_per_epoch = data->train->steps_per_epoch();
  if (steps_per_epoch == 0) {
    if (collective.rank() == 0) {
      PrintError("--batch_size=" + std::to_string(config.batch_size) + " on " +
                     std::to_string(collective.size()) + " ranks needs more than the " +
                     std::to_string(data->train_examples) + " training images",
                 "pass a smaller --batch_size");
    }
    return kUsageExitCode;
  }
  TrainerOptions options;
  options.batch_size = config.batch_size;
  options.total_steps =
      config.num_batches > 0 ? config.num_batches : config.num_epochs * steps_per_epoch;
  options.num_warmup_batches = config.num_warmup_batches;
  options.learning_rate = config.learning_rate;
  options.momentum = config.momentum;
  options.display_every = config.display_every;
  options.print_losses = config.print_losses;
  options.fusion.threshold_bytes = static_cast<size_t>(config.fusion_threshold_mb) << 20;
  options.variable_update = config.variable_update == "parameter_server"
                                ? VariableUpdate::kParameterServer
                                : VariableUpdate::kAllreduce;
  options.overlap_backward = config.overlap_backward;
  options.fusion.fp16 = config.fp16_allreduce;
  options.device = device.device;
  options.seed = config.seed;
  options.model_name = config.model;
  options.checkpoint_every = config.checkpoint_every;

  // Deliberately a different initialisation on each rank: the broadcast from rank 0 is what
  // makes the ranks start equal (and the two-rank test checks it). Rank 0 matches a 1-rank run.
  torch::manual_seed(config.seed + static_cast<uint64_t>(collective.rank()));
  ModelPtr model = info.create();
  model->to(device.device);
  model = ApplyComputeFormat(config, std::move(model));
  std::optional<ChannelsLastDataSource> channels_last;
  DataSource* train = data->train.get();
  if (config.data_format == "NHWC") train = &channels_last.emplace(*data->train);
  std::unique_ptr<CheckpointStore> checkpoints;
  std::optional<Checkpoint> resume;
  if (auto code = SetUpCheckpoints(config, collective, *model, &checkpoints, &resume)) {
    return *code;
  }
  options.checkpoints = checkpoints.get();
  options.resume_from = resume ? &*resume : nullptr;
  Reporter reporter(std::cout, collective.rank());
  reporter.Header(MakeHeader(config, *data, collective, device.description, threads,
                             options.total_steps));
  // From here on a rank that waits too long in a collective ends the job, naming who is missing.
  std::optional<WatchedCollective> watched;
  std::unique_ptr<MpiStallWatchdog> watchdog;
  Collective* comm = &collective;
  if (config.stall_timeout > 0 && collective.size() > 1) {
    comm = &watched.emplace(collective);
    Result<std::unique_ptr<MpiStallWatchdog>> started =
        MpiStallWatchdog::Start(MPI_COMM_WORLD, *watched, config.stall_timeout, kRuntimeExitCode);
    if (!started.ok()) {
      PrintError(RankPrefix(collective) + started.status().message());
      return kRuntimeExitCode;
    }
    watchdog = std::move(*started);
  }
  std::unique_ptr<Timeline> timeline;
  if (!config.timeline.empty()) timeline = std::make_unique<Timeline>();
  options.timeline = timeline.get();
  Trainer trainer(options, *model, *comm, *train, data->test ? &*data->test : nullptr, reporter);
  Result<TrainResult> result = trainer.Run();
  if (watchdog) watchdog->Stop();
  if (timeline) {
    // Written also after a failed run: the trace of the steps before it may explain it.
    const std::string path = TimelinePath(config.timeline, collective.rank(), collective.size());
    if (Status s = WriteTimeline(*timeline, collective.rank(), path); !s.ok()) {
      reporter.Warning(RankPrefix(collective) + s.message());
    }
  }
  if (!result.ok()) {
    PrintError(RankPrefix(collective) + result.status().message());
    return kRuntimeExitCode;
  }
  if (!config.dump_params.empty()) {
    const std::string path = DumpPath(config.dump_params, collective.rank(), collective.size());
    if (Status s = DumpParameters(*model, path); !s.ok()) {
      PrintError(RankPrefix(collective) + s.message());
      return kRuntimeExitCode;
    }
  }
  return 0;
}

int RunMain(int argc, char** argv) {
  const ModelRegistry registry = BuiltinModels();
  const bool first_rank = RankFromEnvironment() == 0;  // print usage errors once, not per rank
  std::ostringstream discard;
  TrainConfig config;
  if (auto code = ParseFlags(argc, argv, registry.Names(), &config,
                             first_rank ? std::cout : discard, first_rank ? std::cerr : discard)) {
    return *code;
  }
  Result<const ModelInfo*> info = registry.Find(config.model);
  if (!info.ok()) {
    if (first_rank) PrintError(info.status().message(), UnknownModelHint(config.model, registry.Names()));
    return kUsageExitCode;
  }
  // Decided before MPI starts, so that a refused --collective=nccl exits like any usage error.
  // --collective=mpi never touches the CUDA runtime.
  // parameter_server and the hierarchical allreduce are MPI algorithms: auto means mpi for them
  // (an explicit --collective=nccl with them was refused by ParseFlags).
  const bool mpi_only =
      config.variable_update == "parameter_server" || config.allreduce_alg == "hierarchical";
  const std::string backend = mpi_only ? std::string("mpi") : config.collective;
  const CudaDevices cuda = backend == "mpi" ? CudaDevices{} : ProbeCudaDevices();
  const Result<CollectiveKind> kind = ChooseCollective(backend, NcclBuiltIn(), cuda);
  if (!kind.ok()) {
    if (first_rank) PrintError(kind.status().message(), kCollectiveHint);
    return kUsageExitCode;
  }
  // The stall watchdog talks MPI from its own thread; the gradient overlap's communication
  // thread takes turns with the main thread (MPI_THREAD_SERIALIZED would do; MULTIPLE is what the
  // environment asks for beyond FUNNELED).
  const bool overlap = config.overlap_backward && config.variable_update == "allreduce";
  Result<std::unique_ptr<MpiEnvironment>> mpi = MpiEnvironment::Create(
      &argc, &argv, /*thread_multiple=*/config.stall_timeout > 0 || overlap);
  if (!mpi.ok()) {
    PrintError(mpi.status().message());
    return kRuntimeExitCode;
  }
  Result<std::unique_ptr<MpiCollective>> collective = MpiCollective::Create(MPI_COMM_WORLD);
  if (!collective.ok()) {
    PrintError(collective.status().message());
    return kRuntimeExitCode;
  }
  std::unique_ptr<Collective> nccl;
#ifdef DLJOB_HAVE_NCCL
  if (*kind == CollectiveKind::kNccl) {
    Result<std::unique_ptr<NcclCollective>> created =
        NcclCollective::Create(MPI_COMM_WORLD, LocalRankFromEnvironment() % cuda.count);
    if (!created.ok()) {
      PrintError(RankPrefix(**collective) + created.status().message());
      if ((*collective)->size() > 1) AbortAllRanks(kRuntimeExitCode);
      return kRuntimeExitCode;
    }
    nccl = std::move(*created);
  }
#endif
  std::unique_ptr<Collective> hierarchical;
  if (config.allreduce_alg == "hierarchical") {
    Result<std::unique_ptr<Collective>> created =
        MakeHierarchicalMpiCollective(MPI_COMM_WORLD, config.hierarchical_local_size);
    if (!created.ok()) {
      // Every rank fails alike (a world size that is no multiple of the local size): exit 2.
      if ((*collective)->rank() == 0) {
        // The message says what to pass instead.
        PrintError("--allreduce_alg=hierarchical: " + created.status().message());
      }
      return kUsageExitCode;
    }
    hierarchical = std::move(*created);
  }
  Collective& chosen = nccl           ? *nccl
                       : hierarchical ? *hierarchical
                                      : static_cast<Collective&>(**collective);
  try {
    return Train(config, **info, chosen);
  } catch (const c10::Error& e) {
    PrintError(RankPrefix(**collective) + e.what_without_backtrace());
  } catch (const std::exception& e) {
    PrintError(RankPrefix(**collective) + e.what());
  }
  // Other ranks may be blocked in a collective; take the whole job down rather than hang.
  if ((*collective)->size() > 1) AbortAllRanks(kRuntimeExitCode);
  return kRuntimeExitCode;
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
