// Elastic resume: how a run continues a checkpoint, at the world size (rank count) it was written
// on or at another one. Pure.
//
// The operator resizes an elastic job by stopping it with a checkpoint (SIGTERM, stop_signal.h)
// and starting mpirun again with another -np and the same flags. --batch_size (per rank) and
// --learning_rate therefore stay those given for the job's first world size, which every
// checkpoint carries on as base_world_size. A run at world size W resuming a checkpoint written
// on W_c ranks with per-rank batch B_c (global batch G_c = W_c x B_c):
//   * by default it keeps the global batch: the per-rank batch becomes G_c / W (FailedPrecondition
//     when W does not divide G_c) and the learning rate is --learning_rate. The flags must define
//     the same global batch: --batch_size x base_world_size == G_c.
//   * with --elastic_lr_scaling it keeps the per-rank batch (--batch_size must equal B_c), so the
//     global batch becomes W x B_c, and scales the learning rate by the linear scaling rule:
//     --learning_rate x W / base_world_size. The rate is derived from the flags and the base
//     world size every time, never from the previous run's rate, so repeated resizes do not
//     compound rounding.
// --model and --seed must match in both modes (CheckResumable, checkpoint.h).
//
// The data position carries over as (epoch, offset): the samples of that epoch's global order
// that all ranks together have trained on. With the sampler's strided partition
// (storage/loader/sampler.h) one step on W ranks with batch B takes exactly the next W x B entries
// of that order whatever W is, so resuming at the offset sees no sample of the epoch twice and
// skips none. Each epoch has floor(U / G) steps, U being the entries of its order the sampler lets
// the ranks use (W x floor(N / W) under Remainder::kDrop), which equals floor(N / G): with the
// global batch kept every step number, epoch boundary and batch is the uninterrupted run's. With
// a new global batch the resumed epoch has floor((U - offset) / G) steps left, later epochs the
// full count, and step numbers simply continue from the checkpoint's.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "images/trainer/checkpoint.h"

namespace dljob::trainer {

// Where a batch starts: its epoch (0-based) and the entries of that epoch's global order that all
// ranks together trained on before it.
struct DataPosition {
  int64_t epoch = 0;
  int64_t offset = 0;
  bool operator==(const DataPosition&) const = default;
};

// This run's side of a resume: its world size and the flags that matter.
struct RunSettings {
  int world_size = 1;
  int64_t batch_size = 0;  // --batch_size, per rank
  double learning_rate = 0.0;
  bool elastic_lr_scaling = false;
  uint64_t seed = 0;
  std::string model;
};

// How this run trains: from the start, or continuing a checkpoint.
struct ResumePlan {
  bool resumed = false;
  int64_t step = 0;            // steps done; 0 without a checkpoint
  DataPosition next;           // the next batch's position
  int64_t batch_size = 0;      // per rank, for this run
  double learning_rate = 0.0;  // for this run
  bool elastic_lr_scaling = false;
  int saved_world_size = 1;      // the checkpoint's world size (this run's without one)
  int64_t saved_batch_size = 0;  // the checkpoint's per-rank batch (this run's without one)
  int base_world_size = 1;       // the world size the flags were given for
  int64_t resizes = 0;           // resumes at another world size so far, this one included

  bool resized(int world_size) const { return resumed && saved_world_size != world_size; }
};

// A run with no checkpoint: the flags as given, base_world_size = run.world_size.
ResumePlan FreshPlan(const RunSettings& run);

// The rules above. Errors are FailedPrecondition naming the numbers and what to do.
Result<ResumePlan> PlanResume(const CheckpointMeta& saved, const RunSettings& run);

// --learning_rate x world_size / base_world_size with scaling, else --learning_rate.
double ElasticLearningRate(double learning_rate, bool scaling, int world_size, int base_world_size);

// "resumed at step 120 on 4 ranks (checkpoint written on 2): global batch 64 kept, per-rank
// batch 32 → 16" (or "per-rank batch 32 kept, global batch 64 → 128, learning rate 0.05 → 0.1").
// REQUIRES: plan.resized(world_size).
std::string DescribeResize(const ResumePlan& plan, int world_size, double flag_learning_rate);

// Which step trains which batch, from a starting point on: after `done` steps the next batch is
// at `next`; each step takes `global_batch` entries of the `epoch_samples` each epoch's order
// offers. Immutable.
class StepSchedule {
 public:
  // REQUIRES: 0 < global_batch <= epoch_samples, 0 <= next.offset.
  StepSchedule(int64_t done, DataPosition next, int64_t global_batch, int64_t epoch_samples);

  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  // REQUIRES: step > done.
  DataPosition At(int64_t step) const;
  // Whether `step`'s batch is the last of its epoch. REQUIRES: step > done.
  bool EndsEpoch(int64_t step) const;
  // The step that ends 0-based `epoch` (the steps done when it ends before the first one left).
  int64_t LastStepOfEpoch(int64_t epoch) const;

 private:
  int64_t done_;
  DataPosition next_;
  int64_t global_batch_;
  int64_t steps_per_epoch_;
  int64_t first_epoch_steps_;  // steps left in next_.epoch
};

}  // namespace dljob::trainer
