// Word-level text corpora for language models, as PTB recipes prepare them: words to ids through
// a vocabulary built from the training split, each split one long stream of ids, a rank's share
// of the training stream cut into batch columns and read in BPTT windows.
//
//   - Tokenize: lowercase words (runs of letters, with apostrophes inside a word kept: "lord's");
//     digits, punctuation and everything else separate words and are dropped.
//   - Vocabulary::Build: the max_size most frequent words of the training split (ties by
//     spelling), "<unk>" for the rest and "<eos>" for the end of a sentence (verse) counted
//     among them. Deterministic.
//   - Batchify(stream, B): the stream cut to a multiple of B and folded into [rows, B], column j
//     holding the j-th contiguous piece (so each column is a stream of its own).
//   - BpttWindow(batched, i, T): inputs rows [i, i+T) and targets rows [i+1, i+T+1).
//   - RankShare(stream, world, rank): rank r's contiguous part, every part floor(N / world) long.
//   - UnigramPerplexity: the perplexity of the split's ids under the training split's unigram
//     distribution, the baseline a language model has to beat.
//
// Pure functions and a value type; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <torch/types.h>

namespace dljob::trainer {

inline constexpr std::string_view kUnknownWord = "<unk>";
inline constexpr std::string_view kEndOfSentence = "<eos>";

std::vector<std::string> Tokenize(std::string_view text);

class Vocabulary {
 public:
  // From the words of the training split; `<eos>` is counted as a word. REQUIRES: max_size >= 2.
  static Vocabulary Build(const std::vector<std::string>& train_words, int64_t max_size);

  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  // The id of `word`, or of <unk> when it is not in the vocabulary.
  int64_t Id(const std::string& word) const;
  const std::string& Word(int64_t id) const { return words_.at(static_cast<size_t>(id)); }
  int64_t unknown_id() const { return unknown_id_; }
  std::vector<int64_t> Ids(const std::vector<std::string>& words) const;

 private:
  std::vector<std::string> words_;  // by id: most frequent first
  std::map<std::string, int64_t, std::less<>> ids_;
  int64_t unknown_id_ = 0;
};

// int64 [floor(N / columns), columns]. REQUIRES: stream is 1-D, columns >= 1.
torch::Tensor Batchify(const torch::Tensor& stream, int64_t columns);

struct BpttBatch {
  torch::Tensor inputs;   // int64 [T, B]
  torch::Tensor targets;  // int64 [T, B]: the next word of each input
};
// REQUIRES: 0 <= row and row + bptt + 1 <= batched.size(0).
BpttBatch BpttWindow(const torch::Tensor& batched, int64_t row, int64_t bptt);
// Full windows in a [rows, B] batch: floor((rows - 1) / bptt).
int64_t BpttWindows(int64_t rows, int64_t bptt);

// REQUIRES: world >= 1, 0 <= rank < world.
torch::Tensor RankShare(const torch::Tensor& stream, int world, int rank);

// A corpus's three splits as words (with <eos> at each sentence end), and as ids.
struct WordSplits {
  std::vector<std::string> train, valid, test;
};
struct Corpus {
  Vocabulary vocab;
  std::vector<int64_t> train, valid, test;
};
// The vocabulary built from words.train (at most vocab_size words), and every split in its ids.
Corpus BuildCorpus(const WordSplits& words, int64_t vocab_size);

// exp(-mean log p(w)) over `split`, p the training split's word frequencies. Words the training
// split never has (impossible for ids of a vocabulary built from it) count as one occurrence.
double UnigramPerplexity(const std::vector<int64_t>& train, const std::vector<int64_t>& split,
                         int64_t vocab_size);

}  // namespace dljob::trainer
