// Model and ModelRegistry: the networks dljob-train can train, by name.
//
// A Model is a LibTorch module whose forward() maps a batch to logits. For classifiers
// (Task::kClassification) that is a float32 batch [B, C, H, W] to logits [B, num_classes]; for
// language models (Task::kLanguageModel) int64 token ids [T, B] (T time steps of B streams) to
// logits [T, B, vocab] for the next token at each position. Either way the training loss is the
// cross-entropy of logits.reshape({-1, last}) against the targets flattened. A recurrent
// language model carries its hidden state from one batch to the next (truncated BPTT: the
// state, detached from the graph, is where the next batch starts); ResetState() forgets it.
// LibTorch modules are reference-counted (register_module and the optimizer
// keep shared_ptrs), so models travel as ModelPtr = std::shared_ptr<Model>.
//
// The registry maps a name ("mnist_cnn") to a factory plus the input shape and class count the
// model expects. Each model family adds itself with a RegisterXxx(ModelRegistry&) function (see
// models/builtin.h); BuiltinModels() builds a registry holding all of them. There is no global
// registry: callers own the one they build.
//
// Thread-safety: a ModelRegistry is thread-compatible (const methods may run concurrently).
// Models follow LibTorch's rules (not thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "base/status.h"

namespace dljob::trainer {

class Model : public torch::nn::Module {
 public:
  // Logits [B, num_classes] for inputs [B, C, H, W]; language models: [T, B, vocab] for [T, B].
  virtual torch::Tensor forward(torch::Tensor input) = 0;
  // Stateful models (recurrent language models) start the next batch from a zero state; the
  // trainer calls it at each epoch start and before an evaluation. Others: nothing to forget.
  virtual void ResetState() {}
};
using ModelPtr = std::shared_ptr<Model>;

enum class Task { kClassification, kLanguageModel };

// The shape of a language model, fixed by the flags and the corpus's vocabulary.
struct LanguageModelOptions {
  int64_t vocab_size = 10000;
  int64_t layers = 2;
  int64_t hidden_size = 200;  // also the embedding size
  double dropout = 0.0;       // on the embeddings, between layers and before the decoder
  bool tied_embeddings = false;
  double init_scale = 0.1;  // parameters drawn uniformly from [-init_scale, init_scale]
};

struct ModelInfo {
  std::string name;
  std::string description;           // one line, for --help and the header
  std::vector<int64_t> input_shape;  // [C, H, W]
  int64_t num_classes = 0;
  std::function<ModelPtr()> create;  // a freshly initialised model (uses torch's RNG)
  Task task = Task::kClassification;
  // kLanguageModel: a model of the given shape (create() makes one of the default shape).
  std::function<ModelPtr(const LanguageModelOptions&)> create_language_model = nullptr;
};

class ModelRegistry {
 public:
  // AlreadyExists if the name is taken; InvalidArgument if info has no name or factory.
  Status Register(ModelInfo info);

  // NotFound with a one-line message listing the known names; see UnknownModelHint for a hint.
  Result<const ModelInfo*> Find(const std::string& name) const;

  // Sorted.
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, ModelInfo> models_;
};

// "did you mean "mnist_cnn"?" when a known name is within a small edit distance of `name`,
// otherwise a generic hint naming the flag.
std::string UnknownModelHint(const std::string& name, const std::vector<std::string>& known);

// Levenshtein distance; exposed for tests.
size_t EditDistance(const std::string& a, const std::string& b);

}  // namespace dljob::trainer
