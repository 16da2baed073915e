#include "jobs/log_lines.h"

#include <charconv>
#include <optional>
#include <utility>

namespace dljob {
namespace {

bool ParseInt(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

constexpr std::string_view kLauncherTag = "[mpirun] ";
constexpr std::string_view kRankTag = "[rank ";

// mpirun's tag at the start of `s` ("[1,3]<stdout>:"): its rank, stream and length.
struct Tag {
  int rank = 0;
  bool is_stderr = false;
  size_t size = 0;
};
std::optional<Tag> TagAt(std::string_view s) {
  if (s.empty() || s.front() != '[') return std::nullopt;
  size_t comma = s.find(',');
  size_t close = s.find(']');
  if (comma == std::string_view::npos || close == std::string_view::npos || comma > close) {
    return std::nullopt;
  }
  int job = 0, rank = 0;
  if (!ParseInt(s.substr(1, comma - 1), job) ||
      !ParseInt(s.substr(comma + 1, close - comma - 1), rank)) {
    return std::nullopt;
  }
  std::string_view rest = s.substr(close + 1);
  for (auto [stream, is_err] : {std::pair{std::string_view("<stdout>:"), false},
                                std::pair{std::string_view("<stderr>:"), true}}) {
    if (rest.substr(0, stream.size()) == stream)
      return Tag{rank, is_err, close + 1 + stream.size()};
  }
  return std::nullopt;
}

}  // namespace

MpirunLine ParseMpirunLine(std::string_view line) {
  std::optional<Tag> tag = TagAt(line);
  if (!tag) return {-1, false, std::string(line)};
  const std::string_view own = line.substr(0, tag->size);
  std::string text(line.substr(tag->size));
  for (size_t at; (at = text.find(own)) != std::string::npos;) text.erase(at, own.size());
  return {tag->rank, tag->is_stderr, std::move(text)};
}

std::vector<MpirunLine> OtherRanksPieces(std::string_view line) {
  std::optional<Tag> first = TagAt(line);
  if (!first) return {};
  std::vector<MpirunLine> pieces;
  Tag current = *first;
  size_t start = first->size;  // of the current piece's text
  auto close_piece = [&](size_t end) {
    if (current.rank == first->rank && current.is_stderr == first->is_stderr) return;
    std::string_view text = line.substr(start, end - start);
    if (!pieces.empty() && pieces.back().rank == current.rank &&
        pieces.back().is_stderr == current.is_stderr) {
      pieces.back().text.append(text);
    } else {
      pieces.push_back({current.rank, current.is_stderr, std::string(text)});
    }
  };
  for (size_t at = line.find('[', start); at != std::string_view::npos;
       at = line.find('[', at + 1)) {
    std::optional<Tag> tag = TagAt(line.substr(at));
    if (!tag) continue;
    close_piece(at);
    current = *tag;
    start = at + tag->size;
    at = start - 1;
  }
  close_piece(line.size());
  return pieces;
}

std::string FormatLogLine(int rank, std::string_view text) {
  std::string out = rank < 0 ? std::string(kLauncherTag) : "[rank " + std::to_string(rank) + "] ";
  out.append(text);
  return out;
}

std::optional<TaggedLine> ParseLogLine(std::string_view line) {
  if (line.substr(0, kLauncherTag.size()) == kLauncherTag) {
    return TaggedLine{-1, false, line.substr(kLauncherTag.size())};
  }
  if (line.substr(0, kRankTag.size()) != kRankTag) return std::nullopt;
  size_t close = line.find("] ", kRankTag.size());
  if (close == std::string_view::npos) return std::nullopt;
  int rank = 0;
  if (!ParseInt(line.substr(kRankTag.size(), close - kRankTag.size()), rank)) return std::nullopt;
  return TaggedLine{rank, false, line.substr(close + 2)};
}

}  // namespace dljob
