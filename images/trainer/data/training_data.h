// Building a rank's training data from the --data_name / --data_dir choice.
//
// kFashionMnist loads both splits — from the IDX files in a directory, or from the record shards
// `dljob data pack` made of them (a directory holding train-*.shard, or an oss:// / s3:// URL;
// fashion_mnist_shards.h), which give the identical Dataset — and shards the training split
// across ranks (ShardedDataSource); the test split is kept whole for sharded evaluation.
// kSynthetic makes a fixed random batch of the model's input shape and has no test split.
// kImagenet reads record shards of a packed JPEG tree from a directory or oss:// URL
// (imagenet_shards.h), with no test split (no evaluation yet). Each rank builds its own.
// For a language model (options.task) the data is text (language_data.h): kKjv is the King James
// Bible's training stream, its validation stream kept whole in valid_tokens for perplexity;
// kSynthetic random ids, no validation split; kFashionMnist and kImagenet are refused.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "images/trainer/choices.h"
#include "images/trainer/data/data_source.h"
#include "images/trainer/models/model.h"

namespace dljob::trainer {

struct TrainingDataOptions {
  DataName data_name = DataName::kFashionMnist;
  std::string data_dir;
  std::vector<int64_t> input_shape;  // the model's [C, H, W]
  int64_t num_classes = 0;
  int world = 1;
  int rank = 0;
  int64_t batch_size = 1;
  uint64_t seed = 0;
  bool load_test = true;
  int loader_threads = 4;  // imagenet: JPEG decode threads
  Task task = Task::kClassification;
  int64_t bptt = 20;           // language models: time steps per batch
  int64_t vocab_size = 10000;  // language models: kjv's largest vocabulary, synthetic's size
};

struct TrainingData {
  std::unique_ptr<DataSource> train;
  std::optional<Dataset> test;
  int64_t train_examples = 0;  // per epoch, all ranks together (words for text)
  std::string description;     // for the header
  // Language models: the whole validation stream (int64 ids), the vocabulary's size and the
  // unigram baseline's perplexity on the validation split (0 when there is none).
  std::optional<torch::Tensor> valid_tokens;
  int64_t vocab_size = 0;
  double unigram_valid_perplexity = 0.0;
};

// Errors for fashion-mnist read `cannot read Fashion-MNIST from "<dir>": <why>`.
Result<TrainingData> MakeTrainingData(const TrainingDataOptions& options);

}  // namespace dljob::trainer
