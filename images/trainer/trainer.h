// Trainer: the data-parallel training loop of dljob-train.
//
// One Trainer runs on each rank, given that rank's Model, DataSource and Collective. Run():
//   1. broadcasts every parameter and buffer from rank 0, so all ranks start identical;
//   2. for each step: forward on this rank's batch, mean cross-entropy, backward, then one of two
//      variable updates (TrainerOptions::variable_update; variable_update.h): allreduce (the mean
//      of every gradient over all ranks, fused, per tensor or overlapped with backward, then an
//      SGD(momentum) step on every rank) or parameter_server (the gradients' sum reduced onto rank
//      0, rank 0 alone averages them and steps the optimizer, whose momentum is the one that
//      counts and that checkpoints keep, and the parameters broadcast back from rank 0). Either
//      way ranks apply the same update and keep bit-identical parameters;
//   3. at the end of each epoch (and after the last step), if an Evaluator was given, evaluates:
//      test accuracy for classifiers, validation perplexity for language models (evaluator.h).
// The task shows in three options: rate_unit and samples_per_step (a language model's step
// trains batch_size * bptt words, and the rates read words/sec), loss_multiplier (its gradient
// is that of the loss summed over the BPTT window) and the model's carried state, which the loop
// resets at each epoch's start (a run resumed mid-epoch starts its first batch from a zero
// state). clip_grad_norm clips the global gradient norm before each update (clipped_sgd.h).
// The first num_warmup_batches steps are trained but not timed. All output goes through the
// Reporter. The Trainer does not know how gradients travel, only that a Collective moves them.
//
// Checkpoints (checkpoint.h, training_state.h): given `resume_from` (rank 0 only; checked against
// the model by the caller), rank 0 loads it, and the broadcast of step 1 carries its parameters,
// buffers, momentum and step to every rank; the run then continues at the checkpoint's step + 1
// with the same batches and step numbers the uninterrupted run would have had. Every rank may be
// given `resume_position`, the next batch's place in the data, for a run continuing at another
// world size (elastic.h): the steps then follow a StepSchedule from there, and the batches come
// from DataSource::GetAt. Given a
// CheckpointStore (rank 0 only), rank 0 saves every `checkpoint_every` steps, once
// `checkpoint_every_seconds` have passed since its last save, and after the last step
// (CheckpointDue); a failed save is a warning, not the end of the run. Random draws (dropout) are
// reseeded each step from (seed, rank, step), so a resumed run draws what the uninterrupted one
// drew.
//
// Stopping (stop_signal.h): each step every rank adds whether `stop_requested` says so to the
// step's loss allreduce (one more float, no extra message), so all ranks see a request made on
// any of them after the same step. They then skip that step's evaluation, rank 0 saves a
// checkpoint of the step, all ranks meet in a barrier (so that no rank exits while rank 0 is
// still writing: mpirun kills the others when one exits), and Run returns with `stopped` set.
//
// With a Timeline (comm/timeline.h) the loop records FORWARD and BACKWARD spans and the
// VariableUpdater the rest: OPTIMIZER and the per-bucket NEGOTIATE/FUSE/ALLREDUCE/UNFUSE spans
// (parameter_server: FUSE, REDUCE, UNFUSE, BROADCAST).
//
// Borrowed references (model, collective, data, evaluator, reporter, timeline) must outlive Run().
// Not thread-safe (the updater's overlap thread is internal and joined at the end of Run()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <torch/optim/sgd.h>
#include <torch/types.h>

#include "base/status.h"
#include "images/trainer/checkpoint.h"
#include "images/trainer/comm/collective.h"
#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/timeline.h"
#include "images/trainer/data/data_source.h"
#include "images/trainer/elastic.h"
#include "images/trainer/evaluator.h"
#include "images/trainer/models/model.h"
#include "images/trainer/reporter.h"
#include "images/trainer/variable_update.h"

namespace dljob::trainer {

struct TrainerOptions {
  int64_t batch_size = 32;  // per rank; must match the DataSource's batches
  int64_t total_steps = 0;
  int64_t num_warmup_batches = 5;  // clamped so that at least one step is timed
  double learning_rate = 0.05;
  double momentum = 0.9;
  int64_t display_every = 100;  // >= 1
  bool print_losses = false;    // rank 0 prints every step's global loss (FormatLossTrace)
  torch::Device device = torch::kCPU;
  FusionOptions fusion;  // gradient tensor fusion (threshold_bytes 0: one allreduce per tensor)
  VariableUpdate variable_update = VariableUpdate::kAllreduce;
  bool overlap_backward = true;             // allreduce: reduce buckets during backward
  Timeline* timeline = nullptr;             // null: no timeline
  uint64_t seed = 0;                        // of per-step random draws, and recorded in checkpoints
  std::string model_name;                   // recorded in checkpoints
  CheckpointStore* checkpoints = nullptr;   // rank 0: where to save; null: no checkpoints
  int64_t checkpoint_every = 0;             // > 0: save every N steps (and after the last)
  int64_t checkpoint_every_seconds = 0;     // > 0: also save once N seconds have passed
  const Checkpoint* resume_from = nullptr;  // rank 0: continue from this checkpoint
  // Every rank, when resuming: the next batch's position (elastic.h). Unset: where the resumed
  // step falls at this run's global batch.
  std::optional<DataPosition> resume_position;
  int base_world_size = 0;               // recorded in checkpoints; 0: this run's world size
  int64_t resizes = 0;                   // recorded in checkpoints; > 0: in metric lines too
  std::ostream* sample_trace = nullptr;  // each step: "<step> <epoch> <sample>..." of this rank
  std::function<bool()> stop_requested;  // polled once a step; unset: never stop early
  GradientCompression compression = GradientCompression::kNone;  // allreduce: 2bit
  float compression_threshold = 0.5f;
  RateUnit rate_unit = RateUnit::kImages;  // what samples_per_step counts
  int64_t samples_per_step = 0;            // per rank; 0: batch_size
  double loss_multiplier = 1.0;            // the loss backpropagated is loss * this
  double clip_grad_norm = 0.0;             // > 0: clip the global gradient norm to this
};

struct TrainResult {
  int64_t steps = 0;                  // the last step trained
  bool stopped = false;               // stopped at `steps` on request, before total_steps
  double total_images_per_sec = 0.0;  // global, over the timed steps (words/sec: rate_unit)
  double final_loss = 0.0;            // global mean loss of the last step
  std::optional<double> final_accuracy;
  std::optional<double> final_perplexity;
  std::vector<double> losses;        // global mean loss of every step
  GradientTraffic gradient_traffic;  // this rank's gradient bytes per step (VariableUpdater)
};

class Trainer {
 public:
  // `evaluator` may be null (no evaluation).
  Trainer(const TrainerOptions& options, Model& model, Collective& collective, DataSource& train,
          Evaluator* evaluator, Reporter& reporter);

  // Errors: communication failures, a non-finite loss. Never throws for expected failures;
  // LibTorch exceptions on broken invariants propagate to main's boundary.
  Result<TrainResult> Run();

 private:
  // Broadcasts rank 0's state (restored from resume_from if given); returns the step to resume
  // after (0: from the start).
  struct StepOutcome {
    double loss = 0.0;  // global mean
    bool stop = false;  // some rank asked to stop
  };

  Result<int64_t> StartState();
  bool SaveCheckpoint(int64_t step);  // false after a failed save (already warned about)
  Result<StepOutcome> TrainStep(int64_t step);
  MetricReport Report(int64_t step, int64_t epoch, double loss) const;
  int64_t global_batch() const { return options_.batch_size * collective_.size(); }
  Result<TrainResult> Stop(int64_t step, bool saved, TrainResult& result);
  Status EndEpoch(int64_t step, int64_t epoch, double loss, double window_rate,
                  TrainResult& result);
  void ReportStep(int64_t step, int64_t epoch, double loss, double window_rate, bool metric_line);
  void Finish(TrainResult& result);
  double SamplesPerStep() const {
    return static_cast<double>(options_.samples_per_step > 0 ? options_.samples_per_step
                                                             : options_.batch_size);
  }

  TrainerOptions options_;
  Model& model_;
  Collective& collective_;
  DataSource& train_;
  Evaluator* evaluator_;
  Reporter& reporter_;
  std::unique_ptr<torch::optim::SGD> optimizer_;  // created by Run(); a ClippedSgd
  VariableUpdaterPtr updater_;                    // created by Run(), reset at its end
  std::vector<double> step_seconds_;              // timed steps only
  std::optional<StepSchedule> schedule_;          // set by Run() once the start is known
};

}  // namespace dljob::trainer
