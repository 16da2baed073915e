#include "images/trainer/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <torch/torch.h>

#include "images/trainer/data/text_corpus.h"
#include "images/trainer/reporter.h"

namespace dljob::trainer {

Result<EvalResult> AccuracyEvaluator::Evaluate(Model& model, Collective& collective, int64_t epoch,
                                               torch::Device device) {
  torch::NoGradGuard no_grad;
  model.eval();
  const int64_t n = test_.size();
  const int64_t world = collective.size();
  // This rank's shard: indices rank, rank + W, rank + 2W, ...
  torch::Tensor shard = torch::arange(collective.rank(), n, world, torch::kInt64);
  float counts[2] = {0.0f, static_cast<float>(shard.numel())};
  for (int64_t begin = 0; begin < shard.numel(); begin += batch_size_) {
    torch::Tensor index = shard.slice(0, begin, begin + batch_size_);
    torch::Tensor images = test_.images.index_select(0, index).to(device);
    torch::Tensor labels = test_.labels.index_select(0, index).to(device);
    torch::Tensor predicted = model.forward(images).argmax(1);
    counts[0] += static_cast<float>(predicted.eq(labels).sum().item<int64_t>());
  }
  model.train();
  // float is exact for counts below 2^24.
  collective.Annotate("evaluation");
  if (Status s = collective.AllreduceSum(counts, 2); !s.ok()) return s.WithContext("evaluation");
  const auto correct = static_cast<int64_t>(counts[0]);
  const auto total = static_cast<int64_t>(counts[1]);
  const double accuracy = total > 0 ? static_cast<double>(correct) / static_cast<double>(total) : 0;
  return EvalResult{accuracy, std::nullopt, FormatAccuracy(epoch, accuracy, correct, total)};
}

Result<EvalResult> PerplexityEvaluator::Evaluate(Model& model, Collective& collective,
                                                 int64_t epoch, torch::Device device) {
  torch::NoGradGuard no_grad;
  model.eval();
  model.ResetState();
  const torch::Tensor batched =
      Batchify(RankShare(stream_, collective.size(), collective.rank()), columns_);
  // Every row but the last has a next word to predict; the last window may be shorter.
  double sums[2] = {0.0, 0.0};  // summed cross-entropy, words
  for (int64_t row = 0; row + 1 < batched.size(0); row += bptt_) {
    const int64_t length = std::min(bptt_, batched.size(0) - 1 - row);
    BpttBatch window = BpttWindow(batched, row, length);
    torch::Tensor logits = model.forward(window.inputs.to(device));
    torch::Tensor targets = window.targets.to(device).reshape(-1);
    sums[0] += torch::nn::functional::cross_entropy(
                   logits.reshape({-1, logits.size(-1)}), targets,
                   torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                   .item<double>();
    sums[1] += static_cast<double>(targets.numel());
  }
  model.ResetState();
  model.train();
  // Summed locally in double; float carries the two sums to ~1e-7 relative error.
  float global[2] = {static_cast<float>(sums[0]), static_cast<float>(sums[1])};
  collective.Annotate("evaluation");
  if (Status s = collective.AllreduceSum(global, 2); !s.ok()) return s.WithContext("evaluation");
  const double words = global[1];
  const double perplexity = words > 0 ? std::exp(global[0] / words) : 0.0;
  return EvalResult{std::nullopt, perplexity,
                    FormatPerplexity(epoch, perplexity, static_cast<int64_t>(words))};
}

std::string FormatPerplexity(int64_t epoch, double perplexity, int64_t words) {
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), ": validation perplexity = %.2f (", perplexity);
  return "Epoch " + std::to_string(epoch) + buffer + std::to_string(words) + " words)";
}

}  // namespace dljob::trainer
