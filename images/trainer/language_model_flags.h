// dljob-train's language-model flags: --lstm_config (the presets of Zaremba et al. 2014 for
// Penn Treebank) and the overrides of each preset value, kept in their own block of TrainConfig.
//
//                 layers  hidden  dropout  bptt  init scale  learning rate  clip (global norm)
//   small           2      200     0        20     0.1          1.0           5
//   medium          2      650     0.5      35     0.05         1.0           5
//
// As in the paper, the gradient is that of the loss summed over the BPTT window's time steps and
// averaged over the batch (TrainerOptions::loss_multiplier = bptt), so learning rate 1.0 and
// clip 5 mean what they meant there; the loss printed is the mean per word. For --model=lstm_lm
// the flags the user did not pass default to the preset: --learning_rate, --momentum 0 (plain
// SGD), --clip_grad_norm, and --data_name=kjv. Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "images/trainer/choices.h"
#include "images/trainer/models/model.h"

namespace CLI {
class App;
}

namespace dljob::trainer {

inline constexpr const char* kLstmModelName = "lstm_lm";

struct LanguageModelFlags {
  LstmConfig preset = LstmConfig::kSmall;
  // Unset: the preset's value.
  std::optional<int64_t> layers;
  std::optional<int64_t> hidden_size;
  std::optional<double> dropout;
  std::optional<int64_t> bptt;
  bool tied_embeddings = false;
  int64_t vocab_size = 10000;  // kjv: the most frequent training words kept; synthetic: all
};

// What the presets and overrides come to.
struct LanguageModelSettings {
  LanguageModelOptions model;  // vocab_size is the flag's; the corpus may have fewer words
  int64_t bptt = 20;
  double learning_rate = 1.0;
  double clip_grad_norm = 5.0;
};
LanguageModelSettings ResolveLanguageModel(const LanguageModelFlags& flags);

struct TrainConfig;

// Adds --lstm_config, --lstm_layers, --lstm_hidden_size, --lstm_dropout, --bptt,
// --tied_embeddings, --vocab_size (into config->lm) and --clip_grad_norm (any model).
void AddLanguageModelFlags(CLI::App& app, TrainConfig* config);

// After parsing: for --model=lstm_lm, the preset's defaults for the flags not given (see above).
// InvalidArgument for the image-only flags --data_format=NHWC and --use_fp16 with it.
Status ApplyLanguageModelDefaults(const CLI::App& app, TrainConfig* config);

}  // namespace dljob::trainer
