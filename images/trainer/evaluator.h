// Evaluator: what the trainer measures at the end of each epoch, by task.
//
//   - AccuracyEvaluator (classifiers): top-1 accuracy on a test Dataset, the set sharded across
//     ranks (rank r takes samples r, r + W, ...) and the counts allreduced.
//   - PerplexityEvaluator (language models): exp of the mean cross-entropy per word over a
//     validation stream. The stream is split into W contiguous parts, rank r reads part r
//     batchified into `columns` streams in BPTT windows, carrying the model's hidden state from
//     window to window (from zeros at the start), and the sums of cross-entropy and word counts
//     are allreduced. A model that gives every word the same probability scores the vocabulary's
//     size.
//
// Both switch the model to eval mode and back to train mode, without gradients; the perplexity
// evaluation resets the model's carried state first (the trainer resets it again at the next
// epoch's start). Every rank must call Evaluate together. Borrowed references must outlive the
// evaluator. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <torch/types.h>

#include "base/status.h"
#include "images/trainer/comm/collective.h"
#include "images/trainer/data/dataset.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

struct EvalResult {
  std::optional<double> accuracy;
  std::optional<double> perplexity;
  std::string human;  // the line the trainer prints: "Epoch 1: test accuracy = ..."
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Result<EvalResult> Evaluate(Model& model, Collective& collective, int64_t epoch,
                                      torch::Device device) = 0;
};

class AccuracyEvaluator : public Evaluator {
 public:
  AccuracyEvaluator(const Dataset& test, int64_t batch_size)
      : test_(test), batch_size_(batch_size) {}
  Result<EvalResult> Evaluate(Model& model, Collective& collective, int64_t epoch,
                              torch::Device device) override;

 private:
  const Dataset& test_;
  int64_t batch_size_;
};

class PerplexityEvaluator : public Evaluator {
 public:
  // `stream`: int64 ids, 1-D, the whole split. REQUIRES: columns >= 1, bptt >= 1.
  PerplexityEvaluator(torch::Tensor stream, int64_t columns, int64_t bptt)
      : stream_(std::move(stream)), columns_(columns), bptt_(bptt) {}
  Result<EvalResult> Evaluate(Model& model, Collective& collective, int64_t epoch,
                              torch::Device device) override;

 private:
  torch::Tensor stream_;
  int64_t columns_;
  int64_t bptt_;
};

// "Epoch 1: validation perplexity = 143.21 (63653 words)"
std::string FormatPerplexity(int64_t epoch, double perplexity, int64_t words);

}  // namespace dljob::trainer
