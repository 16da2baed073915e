#include "images/trainer/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <torch/torch.h>

#include "images/trainer/clipped_sgd.h"
#include "images/trainer/training_state.h"

namespace dljob::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Trainer::Trainer(const TrainerOptions& options, Model& model, Collective& collective,
                 DataSource& train, Evaluator* evaluator, Reporter& reporter)
    : options_(options),
      model_(model),
      collective_(collective),
      train_(train),
      evaluator_(evaluator),
      reporter_(reporter) {}

Result<int64_t> Trainer::StartState() {
  int64_t resumed = 0;
  if (collective_.rank() == 0 && options_.resume_from != nullptr) {
    RestoreCheckpoint(*options_.resume_from, model_, *optimizer_);
    resumed = options_.resume_from->meta.step;
  }
  collective_.Annotate("initial parameters");
  if (Status s = BroadcastTrainingState(collective_, model_, *optimizer_); !s.ok()) return s;
  return BroadcastStep(collective_, resumed);
}

bool Trainer::SaveCheckpoint(int64_t step) {
  const DataPosition next = schedule_->At(step + 1);
  CheckpointMeta meta{step,
                      next.epoch,
                      next.offset / global_batch(),
                      collective_.size(),
                      options_.batch_size,
                      options_.seed,
                      options_.model_name,
                      next.offset,
                      options_.base_world_size > 0 ? options_.base_world_size : collective_.size(),
                      options_.resizes};
  Status s = options_.checkpoints->Save(CaptureCheckpoint(model_, *optimizer_, meta));
  if (!s.ok()) {
    reporter_.Warning("checkpoint of step " + std::to_string(step) +
                      " not written: " + s.message() + "; training goes on");
  }
  return s.ok();
}

Result<Trainer::StepOutcome> Trainer::TrainStep(int64_t step) {
  collective_.SetStep(step);
  const DataPosition at = schedule_->At(step);
  Batch batch = train_.GetAt(at.epoch, at.offset, global_batch());
  if (options_.sample_trace != nullptr) {
    *options_.sample_trace << step << ' ' << at.epoch;
    if (batch.samples.defined()) {
      for (int64_t i = 0; i < batch.samples.size(0); ++i) {
        *options_.sample_trace << ' ' << batch.samples[i].item<int64_t>();
      }
    }
    *options_.sample_trace << '\n';
  }
  if (at.offset == 0) model_.ResetState();
  torch::manual_seed(StepSeed(options_.seed, collective_.rank(), step - 1));
  torch::Tensor images = batch.images.to(options_.device);
  torch::Tensor labels = batch.labels.to(options_.device);
  optimizer_->zero_grad();
  Timeline* timeline = options_.timeline;
  torch::Tensor loss;
  {
    TimelineSpan span(timeline, "FORWARD", "compute", kMainThread, step);
    torch::Tensor logits = model_.forward(images);
    // Classifiers: [B, C] against [B]; language models: [T, B, V] against [T, B].
    loss = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                                labels.reshape(-1));
  }
  collective_.Annotate("gradients");
  // From BeforeBackward to the end of Apply the Collective belongs to the updater.
  if (Status s = updater_->BeforeBackward(step); !s.ok()) return s;
  {
    TimelineSpan span(timeline, "BACKWARD", "compute", kMainThread, step);
    const double scale = updater_->loss_scale() * options_.loss_multiplier;
    (scale == 1.0 ? loss : loss * scale).backward();
  }
  if (Status s = updater_->Apply(step, *optimizer_); !s.ok()) return s;
  const bool stop = options_.stop_requested && options_.stop_requested();
  float global[2] = {loss.item<float>(), stop ? 1.0f : 0.0f};  // the loss, ranks asking to stop
  collective_.Annotate("loss");
  if (Status s = collective_.AllreduceSum(global, 2); !s.ok()) return s.WithContext("loss");
  return StepOutcome{static_cast<double>(global[0]) / collective_.size(), global[1] > 0.0f};
}

MetricReport Trainer::Report(int64_t step, int64_t epoch, double loss) const {
  MetricReport report{step,
                      epoch,
                      std::nullopt,
                      loss,
                      std::nullopt,
                      collective_.rank(),
                      collective_.size(),
                      options_.total_steps};
  if (options_.resizes > 0) report.resizes = options_.resizes;
  return report;
}

void Trainer::ReportStep(int64_t step, int64_t epoch, double loss, double window_rate,
                         bool metric_line) {
  MetricReport report = Report(step, epoch, loss);
  if (!step_seconds_.empty()) {
    report.SetRate(options_.rate_unit, window_rate);
    const double global_batch = static_cast<double>(SamplesPerStep()) * collective_.size();
    reporter_.Human(FormatStepRow(step, ComputeSpeedStats(global_batch, step_seconds_), loss,
                                  options_.rate_unit));
  }
  if (metric_line) reporter_.Metric(report);
}

Status Trainer::EndEpoch(int64_t step, int64_t epoch, double loss, double window_rate,
                         TrainResult& result) {
  MetricReport report = Report(step, epoch, loss);
  if (window_rate > 0) report.SetRate(options_.rate_unit, window_rate);
  if (evaluator_ != nullptr) {
    Result<EvalResult> eval = evaluator_->Evaluate(model_, collective_, epoch, options_.device);
    if (!eval.ok()) return eval.status();
    reporter_.Human(eval->human);
    report.accuracy = eval->accuracy;
    report.perplexity = eval->perplexity;
    if (eval->accuracy) result.final_accuracy = eval->accuracy;
    if (eval->perplexity) result.final_perplexity = eval->perplexity;
  }
  reporter_.Metric(report);
  return Status::Ok();
}

Result<TrainResult> Trainer::Run() {
  TrainResult result;
  if (train_.steps_per_epoch() <= 0) {
    return Status::InvalidArgument("the training data has fewer samples than one global batch");
  }
  optimizer_ = std::make_unique<ClippedSgd>(
      model_.parameters(),
      torch::optim::SGDOptions(options_.learning_rate).momentum(options_.momentum),
      options_.clip_grad_norm);
  EnsureMomentumBuffers(*optimizer_);
  updater_.reset();  // an earlier Run's hooks must not see this one's backward
  Result<VariableUpdaterPtr> updater =
      MakeVariableUpdater({options_.variable_update, options_.fusion, options_.overlap_backward,
                           options_.timeline, options_.compression, options_.compression_threshold},
                          model_, collective_);
  if (!updater.ok()) return updater.status();
  updater_ = std::move(*updater);
  result.gradient_traffic = updater_->traffic();
  Result<int64_t> resumed = StartState();
  if (!resumed.ok()) return resumed.status();
  const int64_t start = *resumed;  // steps already done
  model_.train();
  const int64_t total = options_.total_steps;
  const int64_t steps_per_epoch = train_.steps_per_epoch();
  const DataPosition next = options_.resume_position.value_or(
      DataPosition{start / steps_per_epoch, (start % steps_per_epoch) * global_batch()});
  schedule_.emplace(start, next, global_batch(), train_.epoch_samples(global_batch()));
  if (start > 0) {
    reporter_.Human("Resuming from the checkpoint of step " + std::to_string(start) + " (epoch " +
                    std::to_string(schedule_->At(start + 1).epoch + 1) + ")" +
                    (start >= total ? "; it is at or past the last step, nothing to train" : ""));
  }
  const int64_t warmup = start + std::clamp<int64_t>(options_.num_warmup_batches, 0,
                                                     std::max<int64_t>(0, total - start - 1));
  const int64_t display_every = std::max<int64_t>(1, options_.display_every);
  if (warmup > start) {
    reporter_.WarmupStarted();
  } else {
    reporter_.StepTableHeader(options_.rate_unit);
  }
  step_seconds_.clear();
  double window_seconds = 0.0;
  int64_t window_steps = 0;
  const CheckpointPolicy policy{options_.checkpoint_every, options_.checkpoint_every_seconds};
  Clock::time_point last_save = Clock::now();
  for (int64_t step = start + 1; step <= total; ++step) {
    const int64_t epoch = schedule_->At(step).epoch;
    const Clock::time_point start = Clock::now();
    Result<StepOutcome> outcome = TrainStep(step);
    if (!outcome.ok()) return outcome.status().WithContext("step " + std::to_string(step));
    const double loss = outcome->loss;
    const bool stopping = outcome->stop && step < total;  // at the last step: just finish
    const double seconds = SecondsSince(start);
    if (!std::isfinite(loss)) {
      return Status::FailedPrecondition("loss is not finite at step " + std::to_string(step) +
                                        "; try a smaller --learning_rate");
    }
    result.losses.push_back(loss);
    if (options_.print_losses) reporter_.Human(FormatLossTrace(step, loss));
    if (step > warmup) {
      step_seconds_.push_back(seconds);
      window_seconds += seconds;
      ++window_steps;
    } else if (step == warmup) {
      reporter_.WarmupDone();
      reporter_.StepTableHeader(options_.rate_unit);
    }
    const double window_rate =
        window_steps > 0 ? SamplesPerStep() * window_steps / window_seconds : 0.0;
    const bool display = step % display_every == 0;
    // A stopping run skips the evaluation: the grace period is for the checkpoint.
    const bool epoch_end = (schedule_->EndsEpoch(step) || step == total) && !stopping;
    // At an epoch end, the epoch's metric line (with accuracy) stands in for the step's.
    if (display) ReportStep(step, epoch + 1, loss, window_rate, /*metric_line=*/!epoch_end);
    if (epoch_end) {
      if (Status s = EndEpoch(step, epoch + 1, loss, window_rate, result); !s.ok()) return s;
    }
    if (display || epoch_end) {
      window_seconds = 0.0;
      window_steps = 0;
    }
    bool saved = false;
    if (options_.checkpoints != nullptr &&
        CheckpointDue(policy, step, total, SecondsSince(last_save), stopping)) {
      saved = SaveCheckpoint(step);
      last_save = Clock::now();
    }
    if (stopping) return Stop(step, saved, result);
  }
  updater_.reset();  // joins the overlap's communication thread
  Finish(result);
  return result;
}

Result<TrainResult> Trainer::Stop(int64_t step, bool saved, TrainResult& result) {
  updater_.reset();  // joins the overlap's communication thread
  std::string what = "Stopping at step " + std::to_string(step) + " on request (SIGTERM)";
  if (saved) {
    what += "; checkpoint of step " + std::to_string(step) + " saved in \"" +
            options_.checkpoints->dir() + "\"";
  } else if (options_.checkpoints == nullptr) {
    what += "; no --checkpoint_dir, nothing saved";
  }
  reporter_.Human(what);
  collective_.Annotate("stop");
  if (Status s = collective_.Barrier(); !s.ok()) return s.WithContext("stopping");
  result.steps = step;
  result.stopped = true;
  result.final_loss = result.losses.empty() ? 0.0 : result.losses.back();
  return result;
}

void Trainer::Finish(TrainResult& result) {
  result.steps = options_.total_steps;
  result.final_loss = result.losses.empty() ? 0.0 : result.losses.back();
  double seconds = 0.0;
  for (double s : step_seconds_) seconds += s;
  const double own_rate =
      seconds > 0 ? SamplesPerStep() * static_cast<double>(step_seconds_.size()) / seconds : 0;
  result.total_images_per_sec = own_rate * collective_.size();
  reporter_.Human(FormatTotal(result.total_images_per_sec, options_.rate_unit));
  const int64_t steps_per_epoch = train_.steps_per_epoch();
  const int64_t epochs = result.losses.empty()
                             ? (result.steps + steps_per_epoch - 1) / steps_per_epoch
                             : schedule_->At(result.steps).epoch + 1;
  MetricReport report = Report(result.steps, epochs, result.final_loss);
  report.accuracy = result.final_accuracy;
  report.SetRate(options_.rate_unit, own_rate);
  report.perplexity = result.final_perplexity;
  reporter_.Metric(report);
}

}  // namespace dljob::trainer
