// The state of a training run that a checkpoint holds and that ranks must agree on: every
// parameter, every buffer (batch-norm statistics), and SGD's momentum buffers.
//
// Tensors are named "param/<name>", "buffer/<name>" and "momentum/<param name>" after the model's
// named_parameters()/named_buffers(), in registration order. The SGD optimizer creates its
// momentum buffers lazily at the first step; EnsureMomentumBuffers creates them up front as zeros,
// which gives the same first update (0 * momentum + gradient) and lets a resumed run load them
// and rank 0 broadcast them like any other tensor.
//
// Functions of their arguments; they use the Collective only where they say so. Not
// thread-safe (LibTorch modules are not).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/optim/sgd.h>

#include "base/status.h"
#include "images/trainer/checkpoint.h"
#include "images/trainer/comm/collective.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

// Gives every parameter of `optimizer` a zero momentum buffer if it has none. No-op when the
// optimizer's momentum is 0 (it keeps no state then).
void EnsureMomentumBuffers(torch::optim::SGD& optimizer);

// CPU copies of the state, named as above, with `meta`. REQUIRES: EnsureMomentumBuffers ran.
Checkpoint CaptureCheckpoint(Model& model, torch::optim::SGD& optimizer,
                             const CheckpointMeta& meta);

// OK when `checkpoint` holds exactly the tensors CaptureCheckpoint would make for this model
// (same names, order and shapes; momentum buffers iff `with_momentum`); otherwise
// FailedPrecondition naming the first difference.
Status CheckMatchesModel(const Checkpoint& checkpoint, Model& model, bool with_momentum);

// Copies the checkpoint's tensors into the model and optimizer (on their devices).
// REQUIRES: CheckMatchesModel(checkpoint, model, momentum != 0) is OK; EnsureMomentumBuffers ran.
void RestoreCheckpoint(const Checkpoint& checkpoint, Model& model, torch::optim::SGD& optimizer);

// Sends rank 0's parameters, buffers and momentum buffers to every rank (any dtype: non-float32
// tensors travel as float32, exact for the small integer counters models keep).
Status BroadcastTrainingState(Collective& collective, Model& model, torch::optim::SGD& optimizer);

// Rank 0's `step` on every rank (exact below 2^48).
Result<int64_t> BroadcastStep(Collective& collective, int64_t step);
// Rank 0's `values` on every rank, which must pass as many (each exact in [0, 2^48)).
Status BroadcastInt64s(Collective& collective, std::vector<int64_t>& values);

// The seed of step `step`'s random draws (dropout) on `rank`: reseeding each step from this makes
// a resumed run draw what the uninterrupted run drew, without saving generator state.
uint64_t StepSeed(uint64_t seed, int rank, int64_t step);

}  // namespace dljob::trainer
