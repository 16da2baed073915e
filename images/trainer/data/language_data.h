// A language model's training data: the training stream of a corpus (text_corpus.h), one rank's
// contiguous share of it, read as the PTB recipe reads it.
//
// TokenStreamSource batchifies the rank's share into batch_size columns and serves, for step s,
// the BPTT window at row s * bptt: Batch::images holds the input ids int64 [bptt, batch_size],
// Batch::labels the next word of each, int64 [bptt, batch_size]. Consecutive steps continue each
// column where the last one stopped, which is what lets a recurrent model carry its hidden state
// across batches. Every epoch reads the stream in the same order. All ranks' shares have the same
// length, so all report the same steps_per_epoch().
//
// MakeKjvData and MakeSyntheticText build a rank's TrainingData (training_data.h routes
// --data_name to them when the model is a language model). Thread-compatible.
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "base/status.h"
#include "images/trainer/data/data_source.h"
#include "images/trainer/data/training_data.h"

namespace dljob::trainer {

class TokenStreamSource : public DataSource {
 public:
  // `share`: this rank's int64 ids, 1-D. REQUIRES: batch_size >= 1, bptt >= 1.
  TokenStreamSource(const torch::Tensor& share, int64_t batch_size, int64_t bptt);

  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch Get(int64_t epoch, int64_t step) override;

 private:
  torch::Tensor batched_;  // [rows, batch_size]
  int64_t bptt_;
  int64_t steps_per_epoch_;
};

// Words in a synthetic epoch, all ranks together: the size of PTB's training split.
inline constexpr int64_t kSyntheticWordsPerEpoch = 929589;

// --data_name=kjv: the King James Bible (kjv.h), vocabulary of options.vocab_size words.
Result<TrainingData> MakeKjvData(const TrainingDataOptions& options);
// --data_name=synthetic: uniform random ids in [0, vocab_size), a different stream per rank.
Result<TrainingData> MakeSyntheticText(const TrainingDataOptions& options);

}  // namespace dljob::trainer
