#include "images/trainer/training_run.h"

#include <fstream>
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
#include "images/trainer/elastic.h"
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
TrainerOptions MakeTrainerOptions(const TrainConfig& config, const StepSchedule& schedule,
                                  torch::Device device) {
  TrainerOptions options;
  options.batch_size = config.batch_size;
  options.total_steps =
      config.num_batches > 0 ? config.num_batches : schedule.LastStepOfEpoch(config.num_epochs - 1);
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

// Rank 0 opens --checkpoint_dir and picks the newest complete checkpoint; every rank learns
// whether that worked and how this run continues it (elastic.h: the per-rank batch, learning rate
// and data position, which may differ from the flags when the world size changed). Returns an
// exit code to stop with, or nullopt.
std::optional<int> SetUpCheckpoints(const TrainConfig& config, Collective& collective,
                                    std::unique_ptr<CheckpointStore>* store,
                                    std::optional<Checkpoint>* resume, ResumePlan* plan) {
  const RunSettings run{collective.size(),         config.batch_size, config.learning_rate,
                        config.elastic_lr_scaling, config.seed,       config.model};
  *plan = FreshPlan(run);
  if (config.checkpoint_dir.empty()) return std::nullopt;
  Status status;
  std::string hint;
  CheckpointMeta meta;
  bool found = false;
  if (collective.rank() == 0) {
    *store = std::make_unique<CheckpointStore>(config.checkpoint_dir, config.checkpoint_keep);
    status = (*store)->Prepare();
    std::vector<std::string> warnings;
    Result<std::optional<Checkpoint>> latest =
        status.ok() ? (*store)->LoadLatest(&warnings) : Result<std::optional<Checkpoint>>(status);
    for (const std::string& w : warnings) std::cerr << "dljob-train: warning: " << w << "\n";
    if (latest.ok() && latest->has_value()) {
      Result<ResumePlan> planned = PlanResume((*latest)->meta, run);
      status = planned.status().WithContext("--checkpoint_dir=" + config.checkpoint_dir +
                                            ": checkpoint of step " +
                                            std::to_string((*latest)->meta.step));
      hint =
          "continue with the flags it was written with, or pass an empty --checkpoint_dir to "
          "start afresh";
      if (planned.ok()) {
        found = true;
        meta = (*latest)->meta;
        meta.sample_in_epoch = planned->next.offset;
        meta.base_world_size = planned->base_world_size;
        *resume = std::move(*latest);
      }
    } else if (!latest.ok()) {
      status = latest.status().WithContext("--checkpoint_dir");
      hint = "pass a --checkpoint_dir this user can create and write";
    }
  }
  if (auto code = ExitIfAnyRankFailed(collective, status, kUsageExitCode, hint)) return code;
  // Every rank plans from rank 0's checkpoint meta, as rank 0 did (the model and seed matched).
  std::vector<int64_t> shared = {found,
                                 meta.step,
                                 meta.epoch,
                                 meta.world_size,
                                 meta.batch_size,
                                 meta.sample_in_epoch,
                                 meta.base_world_size,
                                 meta.resizes};
  if (Status s = BroadcastInt64s(collective, shared); !s.ok()) {
    PrintError(RankPrefix(collective.rank()) + s.WithContext("resume plan").message());
    return kRuntimeExitCode;
  }
  if (shared[0] == 0) return std::nullopt;
  meta = {shared[1],   shared[2],    0,         static_cast<int>(shared[3]), shared[4],
          config.seed, config.model, shared[5], static_cast<int>(shared[6]), shared[7]};
  Result<ResumePlan> planned = PlanResume(meta, run);
  if (!planned.ok()) {  // not reached: rank 0 planned the same
    PrintError(RankPrefix(collective.rank()) + planned.status().message());
    return kRuntimeExitCode;
  }
  *plan = *planned;
  return std::nullopt;
}

// The data's batches must be positions in an order that does not depend on the rank count for a
// checkpoint's position to carry over to another one (DataSource::elastic).
Status CheckResizable(const TrainConfig& config, const ResumePlan& plan, const DataSource& train,
                      int world_size) {
  if (!plan.resized(world_size) || train.elastic()) return Status::Ok();
  return Status::FailedPrecondition(
      "--checkpoint_dir=" + config.checkpoint_dir + ": the checkpoint of step " +
      std::to_string(plan.step) + " was written on " + std::to_string(plan.saved_world_size) +
      " ranks, and --data_name=" + std::string(Name(config.data_name)) +
      (config.model == "lstm_lm" ? " for a language model" : "") +
      " splits each epoch by rank count, so its position does not carry over to " +
      std::to_string(world_size) + " ranks");
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

int Train(const TrainConfig& flags, const ModelInfo& info, Collective& collective) {
  InstallStopSignal();
  const int threads = ApplyThreadSetting();
  const DeviceChoice device = PickDevice(LocalRankFromEnvironment());
  const Status fp16 = flags.use_fp16 ? CheckMixedPrecisionDevice(device.device) : Status::Ok();
  if (auto code = ExitIfAnyRankFailed(collective, fp16, kUsageExitCode, kFp16Hint)) return *code;
  // The checkpoint comes first: it may set the per-rank batch and learning rate (elastic.h).
  std::unique_ptr<CheckpointStore> checkpoints;
  std::optional<Checkpoint> resume;
  ResumePlan plan;
  if (auto code = SetUpCheckpoints(flags, collective, &checkpoints, &resume, &plan)) {
    return *code;
  }
  TrainConfig config = flags;
  config.batch_size = plan.batch_size;
  config.learning_rate = plan.learning_rate;
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
  const Status resizable = CheckResizable(config, plan, *data->train, collective.size());
  if (auto code = ExitIfAnyRankFailed(collective, resizable, kUsageExitCode,
                                      "resume with -np " + std::to_string(plan.saved_world_size) +
                                          ", or pass an empty --checkpoint_dir to start afresh")) {
    return *code;
  }
  const int64_t global_batch = config.batch_size * collective.size();
  const StepSchedule schedule(plan.step, plan.next, global_batch,
                              data->train->epoch_samples(global_batch));
  TrainerOptions options = MakeTrainerOptions(config, schedule, device.device);
  if (info.task == Task::kLanguageModel) SetLanguageModelOptions(lm, config.batch_size, &options);
  ModelPtr model = CreateModel(config, info, data->vocab_size, collective.rank(), device.device);
  std::optional<ChannelsLastDataSource> channels_last;
  DataSource* train = data->train.get();
  if (config.data_format == DataFormat::kNhwc) train = &channels_last.emplace(*data->train);
  const Status matches = resume
                             ? CheckMatchesModel(*resume, *model, config.momentum != 0)
                                   .WithContext("--checkpoint_dir=" + config.checkpoint_dir +
                                                ": checkpoint of step " + std::to_string(plan.step))
                             : Status::Ok();
  if (auto code = ExitIfAnyRankFailed(
          collective, matches, kUsageExitCode,
          "continue with the flags it was written with, or pass an empty --checkpoint_dir to "
          "start afresh")) {
    return *code;
  }
  options.checkpoints = checkpoints.get();
  options.resume_from = resume ? &*resume : nullptr;
  if (plan.resumed) options.resume_position = plan.next;
  options.base_world_size = plan.base_world_size;
  options.resizes = plan.resizes;
  std::ofstream sample_trace;
  if (!config.trace_samples.empty()) {
    const std::string path = DumpPath(config.trace_samples, collective.rank(), collective.size());
    sample_trace.open(path);
    const Status opened =
        sample_trace ? Status::Ok()
                     : Status::InvalidArgument("--trace_samples: cannot write \"" + path + "\"");
    if (auto code = ExitIfAnyRankFailed(collective, opened, kUsageExitCode,
                                        "pass a --trace_samples path in a writable directory")) {
      return *code;
    }
    options.sample_trace = &sample_trace;
  }
  Reporter reporter(std::cout, collective.rank());
  HeaderInfo header = MakeHeader(config, *data, collective, device.description, threads, options);
  if (info.task == Task::kLanguageModel) {
    LanguageModelOptions shape = lm.model;
    shape.vocab_size = data->vocab_size;
    header.model = LanguageModelDescription(config, shape, lm.bptt);
  }
  reporter.Header(header);
  if (plan.resized(collective.size())) {
    reporter.Human(DescribeResize(plan, collective.size(), flags.learning_rate));
  }
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
