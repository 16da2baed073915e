// The King James Bible as a language-modelling corpus (--data_name=kjv).
//
// The text comes from Debian's bible-kjv package: its `bible` program prints every verse as
// one line, "Ge1:1 In the beginning God created the heaven and the earth." (`bible -f
// Gen1:1-Rev22:21`: 31,102 verses in 66 books). ParseBibleLine splits off the reference and
// keeps the book's abbreviation; SplitByBook tokenises each verse (text_corpus.h: lowercase
// words, punctuation dropped), ends it with <eos> and puts it in the split of its book: a fixed
// set of books is the validation split, another the test split, every other book is training
// data (about 84% / 8% / 8% of the words), so the splits are the same on every machine.
//
// ReadKjvVerses runs the program (the only I/O here); the rest is pure. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "images/trainer/data/text_corpus.h"

namespace dljob::trainer {

inline constexpr std::string_view kBibleProgram = "bible";
inline constexpr int64_t kKjvVerses = 31102;

struct Verse {
  std::string book;  // as `bible` abbreviates it: "Ge", "1Sm", "Rev"
  std::string text;
};

// nullopt for a line that is not "<book><chapter>:<verse> <text>".
std::optional<Verse> ParseBibleLine(std::string_view line);

enum class KjvSplit { kTrain, kValid, kTest };
// Valid: Joshua, Proverbs, Hosea, Mark, Romans. Test: Ruth, Job, Daniel, John, Hebrews.
KjvSplit SplitOfBook(std::string_view book);

WordSplits SplitByBook(const std::vector<Verse>& verses);

// Every verse, by running `<program> -f Gen1:1-Rev22:21`. FailedPrecondition naming the bible-kjv
// package when the program is missing or prints fewer than kKjvVerses verses.
Result<std::vector<Verse>> ReadKjvVerses(const std::string& program = std::string(kBibleProgram));

}  // namespace dljob::trainer
