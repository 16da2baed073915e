// VariableUpdater: how the Trainer turns this rank's gradients into the same parameter update on
// every rank (tf_cnn_benchmarks' --variable_update). The Trainer's loop only runs forward and
// backward; per step it calls
//   BeforeBackward(step)  -> (loss * loss_scale()).backward()  -> Apply(step, optimizer)
// and after Apply returns every rank holds bit-identical parameters. Three implementations, chosen
// by MakeVariableUpdater from VariableUpdateOptions::kind and ::compression:
//   - allreduce: the mean of every gradient over all ranks, then an optimizer step on every rank.
//     The mean costs no pass of its own: loss_scale() is 1/world size, so backward produces
//     gradients already divided by the world size and the allreduce only sums them
//     (FusionOptions::average = false; exactly sum * (1/size) for power-of-two world sizes,
//     within rounding of it otherwise). Float32 CPU gradients go through a FusedAllreducer
//     (comm/fused_allreduce.h) in reverse registration order, bucket by bucket (one ALLREDUCE span
//     each); other gradients (a GPU run) are allreduced one tensor at a time under one ALLREDUCE
//     span. With `overlap_backward`, more than one rank and float32 CPU parameters, a
//     GradientOverlap (comm/gradient_overlap.h) is armed by BeforeBackward and reduces the buckets
//     during backward; Apply collects them. The sums are the same either way;
//   - parameter_server: the gradients are packed into one buffer (FUSE), their sum reduced onto
//     rank 0 (Collective::ReduceSum, REDUCE) in segments of FusionOptions::segment_bytes (one per
//     tensor when fusion is off), rank 0 alone averages them (UNFUSE) and steps the optimizer
//     (its momentum is the one that counts), and the parameters are packed and broadcast from rank
//     0 in the same segments (BROADCAST). BeforeBackward does nothing;
//   - allreduce with 2-bit compression (compression kTwoBit; MXNet KVStore's 2bit): backward
//     runs unscaled (loss_scale() 1), so each rank quantises its own mean gradient against the
//     threshold whatever the world size. Apply lays the gradients end to end in reduction order
//     (FUSE), adds the residual kept from the last step and quantises to 2-bit codes
//     (comm/gradient_compression.h; QUANTIZE), allgathers every rank's packed words
//     (Collective::AllgatherBytes; ALLGATHER), decodes and sums them in rank order, multiplies by
//     1 / world size and writes the mean back into the gradients (UNFUSE), then steps. The
//     residual lives in the updater (one float per parameter value) and is not checkpointed: a
//     resumed run starts with a zero residual. Gradients are exchanged after backward only
//     (overlap_backward is ignored; the flags turn it off) and the fusion threshold does not apply
//     (one allgather per step).
// Every rank issues the same collectives in the same order. Spans go to the optional Timeline
// (comm/timeline.h); the optimizer step is the OPTIMIZER span.
//
// Errors name what was being moved ("gradients", "gradients to rank 0", "parameters from rank
// 0", "2-bit gradients"); after a failed call the Collective is unusable and so is the updater.
//
// traffic() says how many gradient bytes one rank hands the Collective per step, and what the
// same gradients weigh as float32, for the trainer's summary line (FormatGradientTraffic).
//
// Ownership: borrows the Model, the Collective and the Timeline (they must outlive the updater);
// the parameter list is read from the Model at creation and, for the non-overlapped paths, again
// at every Apply. The updater owns its fusion buffer, the overlap (hooks on the parameters and a
// communication thread, removed and joined by the destructor) and the parameter server's packing
// buffer. Not thread-safe: BeforeBackward and Apply are called from the training loop's thread,
// and between a successful BeforeBackward and the return of Apply the Collective belongs to the
// updater (the overlap's thread); the caller must not use it in between.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <torch/optim/optimizer.h>

#include "base/status.h"
#include "images/trainer/choices.h"
#include "images/trainer/comm/collective.h"
#include "images/trainer/comm/fused_allreduce.h"
#include "images/trainer/comm/timeline.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

struct VariableUpdateOptions {
  VariableUpdate kind = VariableUpdate::kAllreduce;
  FusionOptions fusion;          // threshold_bytes 0: one allreduce (or one segment) per tensor
  bool overlap_backward = true;  // allreduce: reduce buckets during backward
  Timeline* timeline = nullptr;  // null: no timeline
  // allreduce only: kTwoBit quantises the gradients to +-threshold or 0 with error feedback.
  GradientCompression compression = GradientCompression::kNone;
  float compression_threshold = 0.5f;  // > 0
};

// Gradient bytes one rank gives the Collective per step (allreduce: the fused float32 or fp16
// buffer; parameter_server: the gradients to rank 0, not the parameters back; 2bit: its packed
// words), and the same gradients as float32.
struct GradientTraffic {
  std::string encoding;  // "fp32", "fp16" or "2bit"; empty: nothing measured (no run)
  int64_t bytes_per_step = 0;
  int64_t fp32_bytes_per_step = 0;
};

// "gradient bytes/step: 14,068 (2bit) vs 225,076 (fp32)", or "gradient bytes/step: 225,076
// (fp32)" when the encoding is float32. Pure.
std::string FormatGradientTraffic(const GradientTraffic& traffic);

class VariableUpdater {
 public:
  virtual ~VariableUpdater() = default;

  // Called after forward and right before loss.backward() of `step` (a label for the timeline).
  // Errors: a failure of an earlier step's overlapped reduction.
  virtual Status BeforeBackward(int64_t step) = 0;
  // REQUIRES: BeforeBackward(step) succeeded and backward has returned; `optimizer` holds the
  // Model's parameters. Exchanges the gradients and steps `optimizer` so that every rank ends
  // with the same parameters. Errors: communication failures.
  virtual Status Apply(int64_t step, torch::optim::Optimizer& optimizer) = 0;
  // What the Trainer multiplies the loss by before backward (only the backward pass; the loss it
  // reports is unscaled).
  virtual double loss_scale() const { return 1.0; }
  virtual GradientTraffic traffic() const = 0;
};
using VariableUpdaterPtr = std::unique_ptr<VariableUpdater>;

// Errors: the overlap cannot be set up (GradientOverlap::Create); compression with the
// parameter_server update or a threshold that is not a positive finite number.
Result<VariableUpdaterPtr> MakeVariableUpdater(const VariableUpdateOptions& options, Model& model,
                                               Collective& collective);

}  // namespace dljob::trainer
