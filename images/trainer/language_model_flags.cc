#include "images/trainer/language_model_flags.h"

#include <CLI/CLI.hpp>

#include "images/trainer/flags.h"

namespace dljob::trainer {

LanguageModelSettings ResolveLanguageModel(const LanguageModelFlags& f) {
  LanguageModelSettings s;
  const bool medium = f.preset == LstmConfig::kMedium;
  s.model.vocab_size = f.vocab_size;
  s.model.layers = f.layers.value_or(2);
  s.model.hidden_size = f.hidden_size.value_or(medium ? 650 : 200);
  s.model.dropout = f.dropout.value_or(medium ? 0.5 : 0.0);
  s.model.tied_embeddings = f.tied_embeddings;
  s.model.init_scale = medium ? 0.05 : 0.1;
  s.bptt = f.bptt.value_or(medium ? 35 : 20);
  s.learning_rate = 1.0;
  s.clip_grad_norm = 5.0;
  return s;
}

void AddLanguageModelFlags(CLI::App& app, TrainConfig* c) {
  LanguageModelFlags* f = &c->lm;
  app.add_option_function<std::string>(
         "--lstm_config",
         [f](const std::string& text) {
           Result<LstmConfig> parsed = ParseChoice<LstmConfig>("--lstm_config", text);
           if (!parsed.ok()) throw CLI::ValidationError(parsed.status().message());
           f->preset = *parsed;
         },
         "lstm_lm: Zaremba et al.'s preset, small (2x200, no dropout, BPTT 20) or medium (2x650, "
         "dropout 0.5, BPTT 35); both lr 1.0, clip 5")
      ->type_name("TEXT:" + KnownNames<LstmConfig>())
      ->default_str("small");
  app.add_option("--lstm_layers", f->layers, "lstm_lm: LSTM layers (default: the preset's)")
      ->check(CLI::Range(1, 16));
  app.add_option("--lstm_hidden_size", f->hidden_size,
                 "lstm_lm: embedding and hidden size (default: the preset's)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--lstm_dropout", f->dropout,
                 "lstm_lm: dropout on the non-recurrent connections (default: the preset's)")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--bptt", f->bptt,
                 "lstm_lm: time steps per batch, the truncated backpropagation's window "
                 "(default: the preset's)")
      ->check(CLI::Range(1, 10000));
  app.add_flag("--tied_embeddings", f->tied_embeddings,
               "lstm_lm: the decoder shares the embedding's weight");
  app.add_option("--vocab_size", f->vocab_size,
                 "lstm_lm: words kept in the kjv vocabulary (the rest are <unk>); the synthetic "
                 "vocabulary's size")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--clip_grad_norm", c->clip_grad_norm,
                 "Scale the gradients down to this global L2 norm before each update (0: off; "
                 "lstm_lm: the preset's 5)")
      ->check(CLI::NonNegativeNumber);
}

Status ApplyLanguageModelDefaults(const CLI::App& app, TrainConfig* c) {
  if (c->model != kLstmModelName) return Status::Ok();
  if (c->data_format == DataFormat::kNhwc || c->use_fp16) {
    return Status::InvalidArgument(
        "--data_format=NHWC and --use_fp16 apply to the image models; drop them with "
        "--model=lstm_lm");
  }
  const LanguageModelSettings s = ResolveLanguageModel(c->lm);
  if (app.count("--learning_rate") == 0) c->learning_rate = s.learning_rate;
  if (app.count("--momentum") == 0) c->momentum = 0.0;
  if (app.count("--clip_grad_norm") == 0) c->clip_grad_norm = s.clip_grad_norm;
  if (app.count("--data_name") == 0) c->data_name = DataName::kKjv;
  return Status::Ok();
}

}  // namespace dljob::trainer
