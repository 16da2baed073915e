#include "images/trainer/flags.h"

#include <CLI/CLI.hpp>

namespace dljob::trainer {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// An option whose value is one of the names in choices.h, parsed straight into the enum. A bad
// value is an error naming the flag and listing the valid names, as CLI::IsMember words it.
template <Choice E>
CLI::Option* AddChoice(CLI::App& app, const std::string& flag, E* value,
                       const std::string& description) {
  CLI::Option* option = app.add_option_function<std::string>(
      flag,
      [flag, value](const std::string& text) {
        Result<E> parsed = ParseChoice<E>(flag, text);
        if (!parsed.ok()) throw CLI::ValidationError(parsed.status().message());
        *value = *parsed;
      },
      description);
  option->type_name("TEXT:" + KnownNames<E>());
  option->default_str(std::string(Name(*value)));
  return option;
}

void AddFlags(CLI::App& app, const std::vector<std::string>& model_names, TrainConfig* c) {
  app.add_option("--model", c->model, "Model to train (" + Join(model_names) + ")")
      ->capture_default_str();
  app.add_option("--batch_size", c->batch_size, "Batch size per rank (per device)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--num_epochs", c->num_epochs, "Epochs to train (unless --num_batches > 0)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--num_batches", c->num_batches, "If > 0: total steps, overriding --num_epochs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--num_warmup_batches", c->num_warmup_batches,
                 "Steps trained before timing starts")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--learning_rate", c->learning_rate, "SGD learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--momentum", c->momentum, "SGD momentum")
      ->check(CLI::Range(0.0, 0.9999))
      ->capture_default_str();
  AddChoice(app, "--data_name", &c->data_name,
            "fashion-mnist, synthetic (no I/O), imagenet (record shards packed by "
            "`dljob data pack` from a JPEG tree), or kjv (the King James Bible's text, for "
            "--model=lstm_lm; package bible-kjv)");
  app.add_option("--data_dir", c->data_dir,
                 "fashion-mnist: a directory with the IDX files, or a directory or "
                 "oss://bucket/prefix with the shards `dljob data pack` made of them; imagenet: "
                 "a directory or oss://bucket/prefix with the packed JPEG shards")
      ->capture_default_str();
  app.add_option("--loader_threads", c->loader_threads,
                 "imagenet: threads per rank decoding and augmenting JPEGs")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  AddChoice(app, "--data_format", &c->data_format,
            "NCHW, or NHWC (channels-last memory format for the model and its inputs)");
  app.add_flag("--use_fp16", c->use_fp16,
               "Mixed precision: float16 autocast for the forward pass (CUDA devices only)");
  app.add_option("--display_every", c->display_every, "Print progress every N steps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", c->seed, "Seed for initialisation and shuffling")->capture_default_str();
  app.add_flag("--eval,!--noeval", c->eval,
               "Test-set accuracy at the end of each epoch (--eval=false to skip)")
      ->capture_default_str();
  app.add_option("--dump_params", c->dump_params,
                 "After training, write all parameters as raw float32 to FILE (FILE.rank<N> "
                 "when there are several ranks)");
  app.add_flag("--print_losses", c->print_losses, "Print every step's global loss (rank 0)");
  app.add_option("--fusion_threshold_mb", c->fusion_threshold_mb,
                 "Gradient fusion buffer in MB (0: one allreduce per tensor)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--checkpoint_dir", c->checkpoint_dir,
                 "Save checkpoints here (rank 0) and resume from the newest complete one");
  app.add_option("--checkpoint_every", c->checkpoint_every,
                 "Steps between checkpoints (0: only after the last step)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--checkpoint_every_seconds", c->checkpoint_every_seconds,
                 "Also save a checkpoint once this many seconds have passed since the last one "
                 "(0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--checkpoint_keep", c->checkpoint_keep, "Newest checkpoints to keep")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--elastic_lr_scaling", c->elastic_lr_scaling,
               "Resuming at another rank count: keep the per-rank batch and scale "
               "--learning_rate by ranks / the job's first rank count (default: keep the global "
               "batch and the learning rate)")
      ->capture_default_str();
  app.add_option("--trace_samples", c->trace_samples,
                 "Write the sample numbers of every step's batch to FILE (FILE.rank<N> when "
                 "there are several ranks): one line per step, `<step> <epoch> <sample>...`");
  app.add_option("--stall_timeout", c->stall_timeout,
                 "Seconds a rank may wait in a collective for the others before the job exits "
                 "naming the missing ranks (0: wait forever)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddChoice(app, "--collective", &c->collective,
            "Communication backend: mpi (CPU), nccl (needs a CUDA device per rank), or "
            "auto (nccl when built in and a CUDA device is present, else mpi)");
  AddChoice(app, "--variable_update", &c->variable_update,
            "allreduce (every rank averages the gradients and steps) or parameter_server "
            "(gradients summed onto rank 0, which steps and broadcasts the parameters)");
  AddChoice(app, "--allreduce_alg", &c->allreduce_alg,
            "ring (the backend's allreduce over all ranks) or hierarchical (reduce-scatter "
            "within each node, allreduce across nodes, allgather within the node; MPI only)");
  app.add_option("--hierarchical_local_size", c->hierarchical_local_size,
                 "hierarchical: ranks per node (0: the real nodes; N: consecutive groups of N "
                 "ranks act as nodes, to try it on one machine)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--fp16_allreduce", c->fp16_allreduce,
               "Send gradients as IEEE half precision (half the bytes; sums rounded to half)");
  app.add_flag("--overlap_backward,!--nooverlap_backward", c->overlap_backward,
               "allreduce: reduce gradient buckets while backward is still running "
               "(--overlap_backward=false: after backward)")
      ->capture_default_str();
  app.add_option("--timeline", c->timeline,
                 "Write a Chrome trace (chrome://tracing, ui.perfetto.dev) of each step's "
                 "forward/backward/optimizer and per-bucket negotiate/fuse/allreduce/unfuse to "
                 "PATH (PATH.rank<N>.json, minus a trailing .json, when there are several ranks)");
  AddLanguageModelFlags(app, c);
}

// Gradient compression: a block of its own.
void AddCompressionFlags(CLI::App& app, TrainConfig* c) {
  AddChoice(app, "--gradient_compression", &c->gradient_compression,
            "allreduce: none, or 2bit (MXNet KVStore's: each gradient value plus the residual "
            "kept from the last step becomes +T, -T or 0, sent as 2 bits; turns "
            "--overlap_backward off)");
  app.add_option("--compression_threshold", c->compression_threshold,
                 "2bit: the threshold T (values >= T send +T, <= -T send -T)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

// What only the command line knows (which flags were given): the overlap default yields to
// compression; an explicit request for both, or a threshold with no compression, is an error.
Status ResolveCompressionFlags(const CLI::App& app, TrainConfig* c) {
  const bool given_overlap = app.get_option("--overlap_backward")->count() > 0;
  const bool given_threshold = app.get_option("--compression_threshold")->count() > 0;
  if (c->gradient_compression == GradientCompression::kNone) {
    if (given_threshold) {
      return Status::InvalidArgument(
          "--compression_threshold applies to --gradient_compression=2bit only; add that flag "
          "or drop this one");
    }
    return Status::Ok();
  }
  if (given_overlap && c->overlap_backward) {
    return Status::InvalidArgument(
        "--overlap_backward reduces gradient buckets while backward runs, and "
        "--gradient_compression=2bit quantises the whole gradient after backward; drop "
        "--overlap_backward (2bit turns it off)");
  }
  c->overlap_backward = false;
  return Status::Ok();
}

}  // namespace

std::optional<int> ParseFlags(int argc, const char* const* argv,
                              const std::vector<std::string>& model_names, TrainConfig* config,
                              std::ostream& out, std::ostream& err) {
  CLI::App app("dljob-train: data-parallel training of image classifiers on LibTorch + MPI",
               "dljob-train");
  app.option_defaults()->always_capture_default();
  AddFlags(app, model_names, config);
  AddCompressionFlags(app, config);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "dljob-train: error: " << e.what() << "\n"
        << "hint: run dljob-train --help for the flags and their defaults\n";
    return kUsageExitCode;
  }
  Status s = ResolveCompressionFlags(app, config);
  if (s.ok()) s = ApplyLanguageModelDefaults(app, config);
  if (s.ok()) s = CheckFlagCombinations(*config);
  if (!s.ok()) {
    err << "dljob-train: error: " << s.message() << "\n"
        << "hint: run dljob-train --help for the flags and their defaults\n";
    return kUsageExitCode;
  }
  return std::nullopt;
}

Status CheckFlagCombinations(const TrainConfig& c) {
  const bool ps = c.variable_update == VariableUpdate::kParameterServer;
  const bool hierarchical = c.allreduce_alg == AllreduceAlg::kHierarchical;
  const bool nccl = c.collective == CollectiveChoice::kNccl;
  if (ps && hierarchical) {
    return Status::InvalidArgument(
        "--allreduce_alg=hierarchical chooses how gradients are allreduced, and "
        "--variable_update=parameter_server does not allreduce them (it reduces them onto rank "
        "0); drop one of the two");
  }
  if (ps && c.fp16_allreduce) {
    return Status::InvalidArgument(
        "--fp16_allreduce compresses the gradient allreduce, and "
        "--variable_update=parameter_server reduces float32 gradients onto rank 0; drop one of "
        "the two");
  }
  if (ps && nccl) {
    return Status::InvalidArgument(
        "--variable_update=parameter_server updates the parameters on rank 0's CPU over MPI; "
        "pass --collective=mpi (or auto) with it, or use --variable_update=allreduce on NCCL");
  }
  if (hierarchical && nccl) {
    return Status::InvalidArgument(
        "--allreduce_alg=hierarchical is built on MPI communicators; pass --collective=mpi (or "
        "auto) with it, or --allreduce_alg=ring on NCCL");
  }
  if (c.gradient_compression == GradientCompression::kTwoBit) {
    const char* other = ps                 ? "--variable_update=parameter_server reduces float32 "
                                             "gradients onto rank 0"
                        : c.fp16_allreduce ? "--fp16_allreduce sends the gradients as float16"
                        : hierarchical     ? "--allreduce_alg=hierarchical allreduces float32 "
                                             "gradients in two levels"
                                           : nullptr;
    if (other != nullptr) {
      return Status::InvalidArgument(
          std::string("--gradient_compression=2bit sends the gradients as 2-bit codes, and ") +
          other + "; drop one of the two");
    }
  }
  if (c.hierarchical_local_size > 0 && !hierarchical) {
    return Status::InvalidArgument(
        "--hierarchical_local_size=" + std::to_string(c.hierarchical_local_size) +
        " applies to --allreduce_alg=hierarchical only; add that flag or drop this one");
  }
  if (c.elastic_lr_scaling && c.checkpoint_dir.empty()) {
    return Status::InvalidArgument(
        "--elastic_lr_scaling says how a run resumes a checkpoint written at another rank count, "
        "and there is no --checkpoint_dir; add one or drop --elastic_lr_scaling");
  }
  return Status::Ok();
}

CollectiveChoice RequestedCollective(const TrainConfig& c) {
  const bool mpi_only = c.variable_update == VariableUpdate::kParameterServer ||
                        c.allreduce_alg == AllreduceAlg::kHierarchical;
  return mpi_only ? CollectiveChoice::kMpi : c.collective;
}

bool NeedsMpiThreadMultiple(const TrainConfig& c) {
  // MPI_THREAD_SERIALIZED would do for the overlap (its thread takes turns with the main one);
  // MULTIPLE is what the environment asks for beyond FUNNELED.
  const bool overlap = c.overlap_backward && c.variable_update == VariableUpdate::kAllreduce;
  return c.stall_timeout > 0 || overlap;
}

}  // namespace dljob::trainer
