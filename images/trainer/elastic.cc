#include "images/trainer/elastic.h"

#include <algorithm>
#include <sstream>

namespace dljob::trainer {

ResumePlan FreshPlan(const RunSettings& run) {
  ResumePlan plan;
  plan.batch_size = run.batch_size;
  plan.learning_rate = run.learning_rate;
  plan.elastic_lr_scaling = run.elastic_lr_scaling;
  plan.saved_world_size = run.world_size;
  plan.saved_batch_size = run.batch_size;
  plan.base_world_size = run.world_size;
  return plan;
}

double ElasticLearningRate(double learning_rate, bool scaling, int world_size,
                           int base_world_size) {
  if (!scaling || world_size == base_world_size) return learning_rate;
  return learning_rate * world_size / base_world_size;
}

Result<ResumePlan> PlanResume(const CheckpointMeta& saved, const RunSettings& run) {
  CheckpointMeta same;
  same.seed = run.seed;
  same.model = run.model;
  if (Status s = CheckResumable(saved, same); !s.ok()) return s;
  const int world = run.world_size;
  const int64_t saved_global = saved.world_size * saved.batch_size;
  ResumePlan plan;
  plan.resumed = true;
  plan.step = saved.step;
  plan.next = {saved.epoch, saved.sample_in_epoch >= 0 ? saved.sample_in_epoch
                                                       : saved.step_in_epoch * saved_global};
  plan.elastic_lr_scaling = run.elastic_lr_scaling;
  plan.saved_world_size = saved.world_size;
  plan.saved_batch_size = saved.batch_size;
  plan.base_world_size = saved.base_world_size > 0 ? saved.base_world_size : saved.world_size;
  plan.resizes = saved.resizes + (world != saved.world_size ? 1 : 0);
  std::ostringstream why;
  if (run.elastic_lr_scaling) {
    if (run.batch_size != saved.batch_size) {
      why << "the checkpoint was written with a per-rank batch of " << saved.batch_size
          << ", this run has --batch_size=" << run.batch_size
          << " and --elastic_lr_scaling keeps the per-rank batch; pass --batch_size="
          << saved.batch_size << ", or drop --elastic_lr_scaling to keep the global batch";
      return Status::FailedPrecondition(why.str());
    }
    plan.batch_size = saved.batch_size;
  } else {
    const int64_t flags_global = run.batch_size * plan.base_world_size;
    if (flags_global != saved_global && plan.base_world_size == saved.world_size) {
      why << "the checkpoint was written with --batch_size=" << saved.batch_size
          << ", this run has --batch_size=" << run.batch_size;
      return Status::FailedPrecondition(why.str());
    }
    if (flags_global != saved_global) {
      why << "the checkpoint's global batch is " << saved_global << " (" << saved.world_size
          << " ranks x " << saved.batch_size << "), this run's --batch_size=" << run.batch_size
          << " on the job's first " << plan.base_world_size << " ranks makes " << flags_global
          << "; pass the flags the job started with (and --elastic_lr_scaling if it ran with it)";
      return Status::FailedPrecondition(why.str());
    }
    if (saved_global % world != 0) {
      why << "the checkpoint's global batch of " << saved_global << " (" << saved.world_size
          << " ranks x " << saved.batch_size << ") does not divide among " << world
          << " ranks; resume on a rank count that divides " << saved_global
          << ", or pass --elastic_lr_scaling to keep the per-rank batch of " << saved.batch_size
          << " and scale the learning rate";
      return Status::FailedPrecondition(why.str());
    }
    plan.batch_size = saved_global / world;
  }
  plan.learning_rate =
      ElasticLearningRate(run.learning_rate, run.elastic_lr_scaling, world, plan.base_world_size);
  return plan;
}

std::string DescribeResize(const ResumePlan& plan, int world_size, double flag_learning_rate) {
  std::ostringstream out;
  const int64_t saved_global = plan.saved_world_size * plan.saved_batch_size;
  out << "resumed at step " << plan.step << " on " << world_size << " ranks (checkpoint written on "
      << plan.saved_world_size << "): ";
  if (plan.elastic_lr_scaling) {
    out << "per-rank batch " << plan.batch_size << " kept, global batch " << saved_global << " → "
        << plan.batch_size * world_size << ", learning rate " << plan.learning_rate
        << " (--learning_rate=" << flag_learning_rate << " x " << world_size << " / "
        << plan.base_world_size << " ranks)";
  } else {
    out << "global batch " << saved_global << " kept, per-rank batch " << plan.saved_batch_size
        << " → " << plan.batch_size;
  }
  return out.str();
}

StepSchedule::StepSchedule(int64_t done, DataPosition next, int64_t global_batch,
                           int64_t epoch_samples)
    : done_(done),
      next_(next),
      global_batch_(global_batch),
      steps_per_epoch_(epoch_samples / global_batch),
      first_epoch_steps_(std::max<int64_t>(0, epoch_samples - next.offset) / global_batch) {
  if (first_epoch_steps_ == 0) {  // nothing of that epoch left: the next one starts
    next_ = {next.epoch + 1, 0};
    first_epoch_steps_ = steps_per_epoch_;
  }
}

DataPosition StepSchedule::At(int64_t step) const {
  const int64_t i = step - done_ - 1;
  if (i < first_epoch_steps_) return {next_.epoch, next_.offset + i * global_batch_};
  const int64_t j = i - first_epoch_steps_;
  return {next_.epoch + 1 + j / steps_per_epoch_, (j % steps_per_epoch_) * global_batch_};
}

bool StepSchedule::EndsEpoch(int64_t step) const {
  const int64_t i = step - done_ - 1;
  if (i < first_epoch_steps_) return i == first_epoch_steps_ - 1;
  return (i - first_epoch_steps_) % steps_per_epoch_ == steps_per_epoch_ - 1;
}

int64_t StepSchedule::LastStepOfEpoch(int64_t epoch) const {
  if (epoch < next_.epoch) return done_;
  return done_ + first_epoch_steps_ + (epoch - next_.epoch) * steps_per_epoch_;
}

}  // namespace dljob::trainer
