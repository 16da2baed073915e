#include "images/trainer/data/language_data.h"

#include <cstdio>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "images/trainer/data/kjv.h"
#include "images/trainer/data/text_corpus.h"

namespace dljob::trainer {
namespace {

torch::Tensor ToTensor(const std::vector<int64_t>& ids) {
  return torch::tensor(ids, torch::kInt64);
}

std::string Thousands(int64_t words) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.0fk", static_cast<double>(words) / 1000.0);
  return buffer;
}

}  // namespace

TokenStreamSource::TokenStreamSource(const torch::Tensor& share, int64_t batch_size, int64_t bptt)
    : batched_(Batchify(share, batch_size)),
      bptt_(bptt),
      steps_per_epoch_(BpttWindows(batched_.size(0), bptt)) {}

Batch TokenStreamSource::Get(int64_t /*epoch*/, int64_t step) {
  BpttBatch window = BpttWindow(batched_, step * bptt_, bptt_);
  return {window.inputs, window.targets, torch::Tensor()};
}

Result<TrainingData> MakeKjvData(const TrainingDataOptions& o) {
  Result<std::vector<Verse>> verses = ReadKjvVerses();
  if (!verses.ok()) return verses.status();
  const Corpus corpus = BuildCorpus(SplitByBook(*verses), o.vocab_size);
  const double unigram = UnigramPerplexity(corpus.train, corpus.valid, corpus.vocab.size());
  TrainingData data;
  data.train = std::make_unique<TokenStreamSource>(
      RankShare(ToTensor(corpus.train), o.world, o.rank), o.batch_size, o.bptt);
  if (o.load_test) data.valid_tokens = ToTensor(corpus.valid);
  data.train_examples = static_cast<int64_t>(corpus.train.size());
  data.vocab_size = corpus.vocab.size();
  data.unigram_valid_perplexity = unigram;
  char unigram_text[32];
  std::snprintf(unigram_text, sizeof(unigram_text), "%.1f", unigram);
  data.description = "kjv (King James Bible by book: " + Thousands(corpus.train.size()) +
                     " train, " + Thousands(corpus.valid.size()) + " valid, " +
                     Thousands(corpus.test.size()) + " test words; vocabulary " +
                     std::to_string(corpus.vocab.size()) + "; unigram valid perplexity " +
                     unigram_text + ")";
  return data;
}

Result<TrainingData> MakeSyntheticText(const TrainingDataOptions& o) {
  at::Generator generator =
      at::detail::createCPUGenerator(o.seed + 7919 * static_cast<uint64_t>(o.rank + 1));
  torch::Tensor share = torch::randint(0, o.vocab_size, {kSyntheticWordsPerEpoch / o.world},
                                       generator, torch::kInt64);
  TrainingData data;
  data.train = std::make_unique<TokenStreamSource>(share, o.batch_size, o.bptt);
  data.train_examples = kSyntheticWordsPerEpoch;
  data.vocab_size = o.vocab_size;
  data.description = "synthetic text (uniform random ids over a vocabulary of " +
                     std::to_string(o.vocab_size) + ", a different stream per rank, no I/O)";
  return data;
}

}  // namespace dljob::trainer
