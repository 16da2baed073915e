#include "images/trainer/data/text_corpus.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <unordered_map>
#include <utility>

#include <torch/torch.h>

namespace dljob::trainer {
namespace {

bool IsWordLetter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    while (!word.empty() && word.back() == '\'') word.pop_back();
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (char c : text) {
    if (IsWordLetter(c)) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (c == '\'' && !word.empty()) {
      word += c;  // inside a word ("lord's"); a trailing one is dropped by flush
    } else {
      flush();
    }
  }
  flush();
  return words;
}

Vocabulary Vocabulary::Build(const std::vector<std::string>& train_words, int64_t max_size) {
  assert(max_size >= 2);
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& w : train_words) ++counts[w];
  std::vector<std::pair<std::string, int64_t>> ranked(counts.begin(), counts.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  Vocabulary vocab;
  const std::string eos(kEndOfSentence);
  const std::string unk(kUnknownWord);
  for (const auto& [word, count] : ranked) {
    // One place is kept for <unk> (when some word is left out) and one for <eos>.
    if (vocab.size() >= max_size - 1) break;
    if (word == unk) continue;
    vocab.ids_.emplace(word, vocab.size());
    vocab.words_.push_back(word);
  }
  if (vocab.ids_.count(eos) == 0) {
    if (vocab.size() >= max_size - 1) {
      vocab.ids_.erase(vocab.words_.back());
      vocab.words_.pop_back();
    }
    vocab.ids_.emplace(eos, vocab.size());
    vocab.words_.push_back(eos);
  }
  vocab.unknown_id_ = vocab.size();
  vocab.ids_.emplace(unk, vocab.unknown_id_);
  vocab.words_.push_back(unk);
  return vocab;
}

int64_t Vocabulary::Id(const std::string& word) const {
  auto it = ids_.find(word);
  return it == ids_.end() ? unknown_id_ : it->second;
}

std::vector<int64_t> Vocabulary::Ids(const std::vector<std::string>& words) const {
  std::vector<int64_t> ids;
  ids.reserve(words.size());
  for (const std::string& w : words) ids.push_back(Id(w));
  return ids;
}

torch::Tensor Batchify(const torch::Tensor& stream, int64_t columns) {
  assert(stream.dim() == 1 && columns >= 1);
  const int64_t rows = stream.size(0) / columns;
  // Column j is the contiguous piece [j * rows, (j + 1) * rows).
  return stream.narrow(0, 0, rows * columns).view({columns, rows}).t().contiguous();
}

BpttBatch BpttWindow(const torch::Tensor& batched, int64_t row, int64_t bptt) {
  assert(row >= 0 && row + bptt + 1 <= batched.size(0));
  return {batched.narrow(0, row, bptt), batched.narrow(0, row + 1, bptt)};
}

int64_t BpttWindows(int64_t rows, int64_t bptt) {
  return rows > 1 && bptt > 0 ? (rows - 1) / bptt : 0;
}

torch::Tensor RankShare(const torch::Tensor& stream, int world, int rank) {
  assert(world >= 1 && rank >= 0 && rank < world);
  const int64_t part = stream.size(0) / world;
  return stream.narrow(0, part * rank, part);
}

Corpus BuildCorpus(const WordSplits& words, int64_t vocab_size) {
  Corpus corpus{Vocabulary::Build(words.train, vocab_size), {}, {}, {}};
  corpus.train = corpus.vocab.Ids(words.train);
  corpus.valid = corpus.vocab.Ids(words.valid);
  corpus.test = corpus.vocab.Ids(words.test);
  return corpus;
}

double UnigramPerplexity(const std::vector<int64_t>& train, const std::vector<int64_t>& split,
                         int64_t vocab_size) {
  std::vector<double> counts(static_cast<size_t>(vocab_size), 0.0);
  for (int64_t id : train) counts[static_cast<size_t>(id)] += 1.0;
  const double total = static_cast<double>(train.size());
  double nll = 0.0;
  for (int64_t id : split) nll -= std::log(std::max(1.0, counts[static_cast<size_t>(id)]) / total);
  return split.empty() ? 0.0 : std::exp(nll / static_cast<double>(split.size()));
}

}  // namespace dljob::trainer
