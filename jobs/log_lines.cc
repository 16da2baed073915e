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
// The digits at `at` of `s` as a number (`at` moved past them); false when there are none.
bool TakeNumber(std::string_view s, size_t& at, int& out) {
  const size_t begin = at;
  while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
  return at > begin && ParseInt(s.substr(begin, at - begin), out);
}

// Reads only as far as the tag goes, so scanning a long line for tags stays linear.
std::optional<Tag> TagAt(std::string_view s) {
  size_t at = 1;
  int job = 0, rank = 0;
  if (s.empty() || s.front() != '[' || !TakeNumber(s, at, job) || at >= s.size() ||
      s[at++] != ',' || !TakeNumber(s, at, rank) || at >= s.size() || s[at++] != ']') {
    return std::nullopt;
  }
  std::string_view rest = s.substr(at);
  for (auto [stream, is_err] : {std::pair{std::string_view("<stdout>:"), false},
                                std::pair{std::string_view("<stderr>:"), true}}) {
    if (rest.substr(0, stream.size()) == stream) return Tag{rank, is_err, at + stream.size()};
  }
  return std::nullopt;
}

}  // namespace

MpirunLine ParseMpirunLine(std::string_view line) {
  std::optional<Tag> tag = TagAt(line);
  if (!tag) return {-1, false, std::string(line)};
  // The text with the rank's own repeated tags left out, in one pass.
  const std::string_view own = line.substr(0, tag->size);
  std::string text;
  for (size_t from = tag->size;;) {
    const size_t at = line.find(own, from);
    text.append(line.substr(from, at == std::string_view::npos ? at : at - from));
    if (at == std::string_view::npos) break;
    from = at + own.size();
  }
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

std::optional<MetricSample> MetricOf(const MpirunLine& line) {
  std::optional<MetricSample> sample = ParseMetricLine(line.text);
  if (sample && !sample->rank && line.rank >= 0) sample->rank = line.rank;
  return sample;
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
