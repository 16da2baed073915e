// dljob-train's command line: flags (tf_cnn_benchmarks names where they exist) -> TrainConfig.
//
// Both `--flag=value` and `--flag value` work; `--help` prints every flag with its default.
// ParseFlags only checks what it can check alone (types, ranges, combinations); the options with
// named values are parsed once into the enums of choices.h. The model name is checked against the
// registry by the caller, which can list the known ones.
// Pure apart from writing to the given streams; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "images/trainer/choices.h"
#include "images/trainer/language_model_flags.h"

namespace dljob::trainer {

struct TrainConfig {
  std::string model = "mnist_cnn";
  int64_t batch_size = 32;  // per rank
  int64_t num_epochs = 1;
  int64_t num_batches = 0;  // > 0: total steps, overriding num_epochs
  int64_t num_warmup_batches = 5;
  double learning_rate = 0.05;
  double momentum = 0.9;
  DataName data_name = DataName::kFashionMnist;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int loader_threads = 4;                      // imagenet: JPEG decode threads per rank
  DataFormat data_format = DataFormat::kNchw;  // kNhwc: channels-last model and inputs
  bool use_fp16 = false;                       // float16 autocast (CUDA only)
  int64_t display_every = 100;
  uint64_t seed = 42;
  bool eval = true;
  std::string dump_params;  // empty: do not dump
  bool print_losses = false;
  int64_t fusion_threshold_mb = 64;      // gradient fusion buffer; 0: one allreduce per tensor
  std::string checkpoint_dir;            // empty: no checkpoints
  int64_t checkpoint_every = 500;        // steps between checkpoints (0: only after the last step)
  int64_t checkpoint_every_seconds = 0;  // also save when this long has passed; 0: off
  int checkpoint_keep = 3;               // newest checkpoints kept
  // Resuming at another world size: keep the per-rank batch and scale the learning rate
  // (elastic.h); off: keep the global batch.
  bool elastic_lr_scaling = false;
  std::string trace_samples;  // empty: off; else each rank writes its steps' sample numbers
  double stall_timeout = 60;  // seconds a rank may wait in a collective; 0: no detector
  CollectiveChoice collective = CollectiveChoice::kAuto;  // comm/collective_backend.h
  VariableUpdate variable_update = VariableUpdate::kAllreduce;
  AllreduceAlg allreduce_alg = AllreduceAlg::kRing;
  int hierarchical_local_size = 0;  // hierarchical: ranks per node; 0: real nodes
  bool fp16_allreduce = false;      // gradients travel as IEEE half
  bool overlap_backward = true;     // allreduce buckets during backward
  std::string timeline;             // empty: no Chrome trace

  // 2-bit gradient compression of the allreduce update (comm/gradient_compression.h).
  GradientCompression gradient_compression = GradientCompression::kNone;
  double compression_threshold = 0.5;  // > 0; MXNet's default
  // Language models (language_model_flags.h) and gradient clipping.
  LanguageModelFlags lm;
  double clip_grad_norm = 0.0;  // > 0: the global gradient norm is clipped to this
};

// Combinations the flags cannot express alone, checked after parsing: parameter_server with
// --allreduce_alg=hierarchical, --fp16_allreduce or --collective=nccl; hierarchical with nccl;
// --hierarchical_local_size without hierarchical; --elastic_lr_scaling without --checkpoint_dir;
// --gradient_compression=2bit with parameter_server, --fp16_allreduce or hierarchical.
// InvalidArgument naming the flags; pure. (ParseFlags runs it and reports its error like any bad
// flag.)
Status CheckFlagCombinations(const TrainConfig& config);

// The backend to ask the registry for: parameter_server and the hierarchical allreduce are MPI
// algorithms, so for them auto means mpi (an explicit nccl with them fails
// CheckFlagCombinations); otherwise --collective as given. Pure.
CollectiveChoice RequestedCollective(const TrainConfig& config);

// Whether a second thread talks MPI: the stall watchdog (--stall_timeout > 0) and the gradient
// overlap's communication thread (allreduce with --overlap_backward). Pure.
bool NeedsMpiThreadMultiple(const TrainConfig& config);

inline constexpr int kUsageExitCode = 2;

// --gradient_compression=2bit exchanges the gradients after backward: ParseFlags turns
// --overlap_backward off with it, and refuses an explicit --overlap_backward(=true), as it refuses
// --compression_threshold without --gradient_compression=2bit.
//
// Parses argv into *config. Returns nullopt to go on, or the exit code to exit with: 0 after
// --help (printed to `out`), kUsageExitCode after a bad flag (a one-line
// `dljob-train: error: ...` plus a hint line, printed to `err`).
std::optional<int> ParseFlags(int argc, const char* const* argv,
                              const std::vector<std::string>& model_names, TrainConfig* config,
                              std::ostream& out, std::ostream& err);

}  // namespace dljob::trainer
