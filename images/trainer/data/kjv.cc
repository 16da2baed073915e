#include "images/trainer/data/kjv.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <memory>

namespace dljob::trainer {
namespace {

constexpr std::array<std::string_view, 5> kValidBooks = {"Josh", "Prv", "Hos", "Mark", "Rom"};
constexpr std::array<std::string_view, 5> kTestBooks = {"Ruth", "Job", "Dan", "John", "Heb"};

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsLetter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::optional<Verse> ParseBibleLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  size_t i = 0;
  if (i < line.size() && IsDigit(line[i])) ++i;  // "1Sm", "2Ki", "3Jn"
  const size_t letters = i;
  while (i < line.size() && IsLetter(line[i])) ++i;
  if (i == letters) return std::nullopt;
  const size_t book_end = i;
  auto digits = [&] {
    const size_t from = i;
    while (i < line.size() && IsDigit(line[i])) ++i;
    return i > from;
  };
  if (!digits() || i >= line.size() || line[i] != ':') return std::nullopt;
  ++i;
  if (!digits() || i >= line.size() || line[i] != ' ') return std::nullopt;
  return Verse{std::string(line.substr(0, book_end)), std::string(line.substr(i + 1))};
}

KjvSplit SplitOfBook(std::string_view book) {
  for (std::string_view b : kValidBooks) {
    if (b == book) return KjvSplit::kValid;
  }
  for (std::string_view b : kTestBooks) {
    if (b == book) return KjvSplit::kTest;
  }
  return KjvSplit::kTrain;
}

WordSplits SplitByBook(const std::vector<Verse>& verses) {
  WordSplits splits;
  for (const Verse& v : verses) {
    std::vector<std::string>* out = &splits.train;
    switch (SplitOfBook(v.book)) {
      case KjvSplit::kValid:
        out = &splits.valid;
        break;
      case KjvSplit::kTest:
        out = &splits.test;
        break;
      case KjvSplit::kTrain:
        break;
    }
    for (std::string& w : Tokenize(v.text)) out->push_back(std::move(w));
    out->emplace_back(kEndOfSentence);
  }
  return splits;
}

Result<std::vector<Verse>> ReadKjvVerses(const std::string& program) {
  const std::string command = program + " -f Gen1:1-Rev22:21 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::vector<Verse> verses;
  if (pipe) {
    std::string line;
    std::array<char, 4096> buffer;
    while (fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) {
      line += buffer.data();
      if (line.empty() || line.back() != '\n') continue;  // a verse longer than the buffer
      if (std::optional<Verse> v = ParseBibleLine(line)) verses.push_back(std::move(*v));
      line.clear();
    }
    if (std::optional<Verse> v = ParseBibleLine(line)) verses.push_back(std::move(*v));
  }
  if (static_cast<int64_t>(verses.size()) < kKjvVerses) {
    return Status::FailedPrecondition(
        "`" + program + " -f Gen1:1-Rev22:21` printed " + std::to_string(verses.size()) +
        " verses, not " + std::to_string(kKjvVerses) +
        "; install the bible-kjv package (scripts/dev/setup.sh does)");
  }
  return verses;
}

}  // namespace dljob::trainer
