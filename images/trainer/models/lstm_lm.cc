// lstm_lm: the word-level LSTM language model of Zaremba, Sutskever & Vinyals (2014), "Recurrent
// Neural Network Regularization" — embedding, a stack of LSTM layers, a linear decoder to the
// vocabulary — with dropout on the non-recurrent connections only (embeddings, between layers,
// before the decoder) and optionally the decoder's weight tied to the embedding (Press & Wolf).
//
// The hidden state (h, c) of the last batch is kept, detached, and is where the next batch
// starts: truncated backpropagation through time over a stream that goes on across batches. A
// batch with another number of streams (columns) than the state starts from zeros.
#include <torch/torch.h>

#include "images/trainer/models/builtin.h"

namespace dljob::trainer {
namespace {

class LstmLanguageModel : public Model {
 public:
  explicit LstmLanguageModel(const LanguageModelOptions& o)
      : hidden_size_(o.hidden_size),
        layers_(o.layers),
        embedding_(register_module("embedding", torch::nn::Embedding(o.vocab_size, o.hidden_size))),
        lstm_(register_module("lstm",
                              torch::nn::LSTM(torch::nn::LSTMOptions(o.hidden_size, o.hidden_size)
                                                  .num_layers(o.layers)
                                                  .dropout(o.layers > 1 ? o.dropout : 0.0)))),
        dropout_(register_module("dropout", torch::nn::Dropout(o.dropout))),
        // Tied: one parameter, registered once (as the embedding's), used twice.
        decoder_weight_(o.tied_embeddings
                            ? embedding_->weight
                            : register_parameter("decoder_weight",
                                                 torch::empty({o.vocab_size, o.hidden_size}))),
        decoder_bias_(register_parameter("decoder_bias", torch::zeros({o.vocab_size}))) {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : parameters()) p.uniform_(-o.init_scale, o.init_scale);
    decoder_bias_.zero_();
  }

  torch::Tensor forward(torch::Tensor tokens) override {
    const int64_t streams = tokens.size(1);
    if (!h_.defined() || h_.size(1) != streams || h_.dtype() != decoder_bias_.dtype() ||
        h_.device() != decoder_bias_.device()) {
      h_ = torch::zeros({layers_, streams, hidden_size_}, decoder_bias_.options());
      c_ = torch::zeros_like(h_);
    }
    torch::Tensor x = dropout_->forward(embedding_->forward(tokens));
    auto [output, state] = lstm_->forward(x, std::make_tuple(h_, c_));
    h_ = std::get<0>(state).detach();
    c_ = std::get<1>(state).detach();
    return torch::nn::functional::linear(dropout_->forward(output), decoder_weight_, decoder_bias_);
  }

  void ResetState() override {
    h_ = torch::Tensor();
    c_ = torch::Tensor();
  }

 private:
  int64_t hidden_size_;
  int64_t layers_;
  torch::nn::Embedding embedding_;
  torch::nn::LSTM lstm_;
  torch::nn::Dropout dropout_;
  torch::Tensor decoder_weight_;  // [vocab, hidden]
  torch::Tensor decoder_bias_;
  torch::Tensor h_, c_;  // carried state [layers, streams, hidden]; undefined: zeros
};

}  // namespace

void RegisterLstmLanguageModel(ModelRegistry& registry) {
  ModelInfo info{"lstm_lm",
                 "word-level LSTM language model (Zaremba et al.; --lstm_config=small|medium)",
                 {},
                 0,
                 [] { return std::make_shared<LstmLanguageModel>(LanguageModelOptions{}); }};
  info.task = Task::kLanguageModel;
  info.create_language_model = [](const LanguageModelOptions& o) {
    return std::make_shared<LstmLanguageModel>(o);
  };
  Status s = registry.Register(std::move(info));
  assert(s.ok());
  (void)s;
}

}  // namespace dljob::trainer
