#include "images/trainer/training_run.h"

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "images/trainer/checkpoint.h"
#include "images/trainer/comm/mpi_environment.h"
#include "images/trainer/comm/mpi_stall_watchdog.h"
#include "images/trainer/comm/timeline.h"
#include "images/trainer/comm/watched_collective.h"
#include "images/trainer/data/training_data.h"
#include "images/trainer/device.h"
#include "images/trainer/evaluator.h"
#include "images/trainer/job_errors.h"
#include "images/trainer/models/compute_format.h"
#include "images/trainer/param_dump.h"
#include "images/trainer/stop_signal.h"
#include "images/trainer/trainer.h"
#include "images/trainer/training_state.h"

namespace dljob::trainer {
namespace {

constexpr int64_t kEvalBatchSize = 1000;  // test images per forward pass
constexpr int64_t kEvalStreams = 10;      // validation text: columns, as PTB recipes evaluate

constexpr const char* kFp16Hint =
    "drop --use_fp16 to train in float32 on this machine, or run on a node with a CUDA GPU";
constexpr const char* kImagenetHint =
    "pass --data_dir=<directory or oss://bucket/prefix> with the shards `dljob data pack` "
    "wrote from a JPEG tree (one folder per class)";
constexpr const char* kPairingHint =
    "--model=lstm_lm trains on --data_name=kjv or synthetic, the image models on fashion-mnist, "
    "imagenet or synthetic";
constexpr const char* kTextHint =
    "install the bible-kjv package (scripts/dev/setup.sh), or pass --data_name=synthetic";
constexpr const char* kDataHint =
    "install the dataset-fashion-mnist package, or pass --data_dir=<directory with the "
    "Fashion-MNIST IDX files, or a directory or oss://bucket/prefix with the shards `dljob data "
    "pack` made of them> (or --data_name=synthetic)";

// "lstm_lm (small: 2 x 200, dropout 0, BPTT 20, untied, vocabulary 10000)"
std::string LanguageModelDescription(const TrainConfig& config, const LanguageModelOptions& m,
                                     int64_t bptt) {
  std::ostringstream out;
  out << config.model << " (" << Name(config.lm.preset) << ": " << m.layers << " x "
      << m.hidden_size << ", dropout " << m.dropout << ", BPTT " << bptt << ", "
      << (m.tied_embeddings ? "tied" : "untied") << ", vocabulary " << m.vocab_size << "; clip "
      << config.clip_grad_norm << ")";
  return out.str();
}

HeaderInfo MakeHeader(const TrainConfig& config, const TrainingData& data, const Collective& c,
                      const std::string& device, int threads, const TrainerOptions& options) {
  HeaderInfo h;
  h.model = config.model;
  h.dataset = data.description;
  h.per_device_batch = config.batch_size;
  h.global_batch = config.batch_size * c.size();
  h.num_batches = options.total_steps;
  const int64_t per_step =
      options.samples_per_step > 0 ? options.samples_per_step : config.batch_size;
  h.num_epochs =
      static_cast<double>(options.total_steps * per_step * c.size()) / data.train_examples;
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

// The Trainer's settings from the flags; checkpoints and the timeline are attached later.
TrainerOptions MakeTrainerOptions(const TrainConfig& config, int64_t steps_per_epoch,
                                  torch::Device device) {
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
  options.variable_update = config.variable_update;
  options.overlap_backward = config.overlap_backward;
  options.fusion.fp16 = config.fp16_allreduce;
  options.compression = config.gradient_compression;
  options.compression_threshold = static_cast<float>(config.compression_threshold);
  options.device = device;
  options.seed = config.seed;
  options.model_name = config.model;
  options.checkpoint_every = config.checkpoint_every;
  options.checkpoint_every_seconds = config.checkpoint_every_seconds;
  options.stop_requested = StopRequested;
  options.clip_grad_norm = config.clip_grad_norm;
  return options;
}

// A language model's step trains batch_size x bptt words, with Zaremba et al.'s gradient of the
// loss summed over the window (language_model_flags.h).
void SetLanguageModelOptions(const LanguageModelSettings& lm, int64_t batch_size,
                             TrainerOptions* options) {
  options->rate_unit = RateUnit::kWords;
  options->samples_per_step = batch_size * lm.bptt;
  options->loss_multiplier = static_cast<double>(lm.bptt);
}

// Rank 0 opens --checkpoint_dir and picks the newest complete checkpoint that fits this run;
// every rank learns whether that worked. Returns an exit code to stop with, or nullopt.
std::optional<int> SetUpCheckpoints(const TrainConfig& config, Collective& collective, Model& model,
                                    std::unique_ptr<CheckpointStore>* store,
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
      const CheckpointMeta run{0,           0,           0, collective.size(), config.batch_size,
                               config.seed, config.model};
      status = CheckResumable((*latest)->meta, run);
      if (status.ok()) status = CheckMatchesModel(**latest, model, config.momentum != 0);
      if (status.ok()) *resume = std::move(*latest);
      status = status.WithContext("--checkpoint_dir=" + config.checkpoint_dir +
                                  ": checkpoint of "
                                  "step " +
                                  std::to_string((*latest)->meta.step));
      hint =
          "continue with the flags and rank count it was written with, or pass an empty "
          "--checkpoint_dir to start afresh";
    } else if (!latest.ok()) {
      status = latest.status().WithContext("--checkpoint_dir");
      hint = "pass a --checkpoint_dir this user can create and write";
    }
  }
  return ExitIfAnyRankFailed(collective, status, kUsageExitCode, hint);
}

// A fresh model of `info` on `device`, in the --data_format and --use_fp16 compute format.
// Deliberately a different initialisation on each rank: the broadcast from rank 0 is what makes
// the ranks start equal (and the two-rank test checks it). Rank 0 matches a 1-rank run.
ModelPtr CreateModel(const TrainConfig& config, const ModelInfo& info, int64_t vocab_size, int rank,
                     torch::Device device) {
  torch::manual_seed(config.seed + static_cast<uint64_t>(rank));
  ModelPtr model;
  if (info.task == Task::kLanguageModel) {
    LanguageModelOptions shape = ResolveLanguageModel(config.lm).model;
    shape.vocab_size = vocab_size;
    model = info.create_language_model(shape);
  } else {
    model = info.create();
  }
  model->to(device);
  if (config.data_format == DataFormat::kNhwc) ToChannelsLast(*model);
  if (config.use_fp16) return std::make_shared<AutocastModel>(std::move(model));
  return model;
}

// From here on a rank that waits too long in a collective ends the job, naming who is missing:
// with --stall_timeout and several ranks, `*comm` becomes `watched` over `collective`.
Result<std::unique_ptr<MpiStallWatchdog>> StartStallWatchdog(
    const TrainConfig& config, Collective& collective, std::optional<WatchedCollective>* watched,
    Collective** comm) {
  *comm = &collective;
  if (config.stall_timeout <= 0 || collective.size() <= 1) {
    return std::unique_ptr<MpiStallWatchdog>();
  }
  *comm = &watched->emplace(collective);
  return MpiStallWatchdog::Start(MPI_COMM_WORLD, **watched, config.stall_timeout, kRuntimeExitCode);
}

int Train(const TrainConfig& config, const ModelInfo& info, Collective& collective) {
  InstallStopSignal();
  const int threads = ApplyThreadSetting();
  const DeviceChoice device = PickDevice(LocalRankFromEnvironment());
  const Status fp16 = config.use_fp16 ? CheckMixedPrecisionDevice(device.device) : Status::Ok();
  if (auto code = ExitIfAnyRankFailed(collective, fp16, kUsageExitCode, kFp16Hint)) return *code;
  const LanguageModelSettings lm = ResolveLanguageModel(config.lm);
  Result<TrainingData> data = MakeTrainingData(
      {config.data_name, config.data_dir, info.input_shape, info.num_classes, collective.size(),
       collective.rank(), config.batch_size, config.seed, config.eval, config.loader_threads,
       info.task, lm.bptt, lm.model.vocab_size});
  const bool language = info.task == Task::kLanguageModel;
  const bool text = config.data_name == DataName::kKjv;
  const bool image =
      config.data_name == DataName::kFashionMnist || config.data_name == DataName::kImagenet;
  const char* data_hint = (language && image) || (!language && text) ? kPairingHint
                          : language                                 ? kTextHint
                          : config.data_name == DataName::kImagenet  ? kImagenetHint
                                                                     : kDataHint;
  if (auto code = ExitIfAnyRankFailed(collective, data.status(), kUsageExitCode, data_hint)) {
    return *code;
  }
  const int64_t steps_per_epoch = data->train->steps_per_epoch();
  if (steps_per_epoch == 0) {
    if (collective.rank() == 0) {
      PrintError("--batch_size=" + std::to_string(config.batch_size) + " on " +
                     std::to_string(collective.size()) + " ranks needs more than the " +
                     std::to_string(data->train_examples) + " training examples",
                 "pass a smaller --batch_size" +
                     std::string(info.task == Task::kLanguageModel ? " or --bptt" : ""));
    }
    return kUsageExitCode;
  }
  TrainerOptions options = MakeTrainerOptions(config, steps_per_epoch, device.device);
  if (info.task == Task::kLanguageModel) SetLanguageModelOptions(lm, config.batch_size, &options);
  ModelPtr model = CreateModel(config, info, data->vocab_size, collective.rank(), device.device);
  std::optional<ChannelsLastDataSource> channels_last;
  DataSource* train = data->train.get();
  if (config.data_format == DataFormat::kNhwc) train = &channels_last.emplace(*data->train);
  std::unique_ptr<CheckpointStore> checkpoints;
  std::optional<Checkpoint> resume;
  if (auto code = SetUpCheckpoints(config, collective, *model, &checkpoints, &resume)) {
    return *code;
  }
  options.checkpoints = checkpoints.get();
  options.resume_from = resume ? &*resume : nullptr;
  Reporter reporter(std::cout, collective.rank());
  HeaderInfo header = MakeHeader(config, *data, collective, device.description, threads, options);
  if (info.task == Task::kLanguageModel) {
    LanguageModelOptions shape = lm.model;
    shape.vocab_size = data->vocab_size;
    header.model = LanguageModelDescription(config, shape, lm.bptt);
  }
  reporter.Header(header);
  std::optional<WatchedCollective> watched;
  Collective* comm = nullptr;
  Result<std::unique_ptr<MpiStallWatchdog>> watchdog =
      StartStallWatchdog(config, collective, &watched, &comm);
  if (!watchdog.ok()) {
    PrintError(RankPrefix(collective.rank()) + watchdog.status().message());
    return kRuntimeExitCode;
  }
  std::unique_ptr<Timeline> timeline;
  if (!config.timeline.empty()) timeline = std::make_unique<Timeline>();
  options.timeline = timeline.get();
  std::unique_ptr<Evaluator> evaluator;
  if (data->test) evaluator = std::make_unique<AccuracyEvaluator>(*data->test, kEvalBatchSize);
  if (data->valid_tokens) {
    evaluator = std::make_unique<PerplexityEvaluator>(*data->valid_tokens, kEvalStreams, lm.bptt);
  }
  Trainer trainer(options, *model, *comm, *train, evaluator.get(), reporter);
  Result<TrainResult> result = trainer.Run();
  if (*watchdog) (*watchdog)->Stop();
  if (timeline) {
    // Written also after a failed run: the trace of the steps before it may explain it.
    const std::string path = TimelinePath(config.timeline, collective.rank(), collective.size());
    if (Status s = WriteTimeline(*timeline, collective.rank(), path); !s.ok()) {
      reporter.Warning(RankPrefix(collective.rank()) + s.message());
    }
  }
  if (!result.ok()) {
    PrintError(RankPrefix(collective.rank()) + result.status().message());
    return kRuntimeExitCode;
  }
  if (result->stopped) return kStoppedExitCode;  // resumed later from its checkpoint
  reporter.Human(FormatGradientTraffic(result->gradient_traffic));
  if (!config.dump_params.empty()) {
    const std::string path = DumpPath(config.dump_params, collective.rank(), collective.size());
    if (Status s = DumpParameters(*model, path); !s.ok()) {
      PrintError(RankPrefix(collective.rank()) + s.message());
      return kRuntimeExitCode;
    }
  }
  return 0;
}

}  // namespace

int RunTraining(const TrainConfig& config, const ModelInfo& info, Collective& collective) {
  try {
    return Train(config, info, collective);
  } catch (const c10::Error& e) {
    PrintError(RankPrefix(collective.rank()) + e.what_without_backtrace());
  } catch (const std::exception& e) {
    PrintError(RankPrefix(collective.rank()) + e.what());
  }
  // Other ranks may be blocked in a collective; take the whole job down rather than hang.
  if (collective.size() > 1) AbortAllRanks(kRuntimeExitCode);
  return kRuntimeExitCode;
}

}  // namespace dljob::trainer
