#include "jobs/log_lines.h"

#include <charconv>

namespace dljob {
namespace {

bool ParseInt(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

constexpr std::string_view kLauncherTag = "[mpirun] ";
constexpr std::string_view kRankTag = "[rank ";

}  // namespace

MpirunLine ParseMpirunLine(std::string_view line) {
  MpirunLine out{-1, false, std::string(line)};
  if (line.empty() || line.front() != '[') return out;
  size_t comma = line.find(',');
  size_t close = line.find(']');
  if (comma == std::string_view::npos || close == std::string_view::npos || comma > close) {
    return out;
  }
  int rank = 0;
  if (!ParseInt(line.substr(comma + 1, close - comma - 1), rank)) return out;
  std::string_view rest = line.substr(close + 1);
  for (auto [stream, is_err] : {std::pair{std::string_view("<stdout>:"), false},
                                std::pair{std::string_view("<stderr>:"), true}}) {
    if (rest.substr(0, stream.size()) != stream) continue;
    std::string tag = std::string(line.substr(0, close + 1)) + std::string(stream);
    std::string text(rest.substr(stream.size()));
    for (size_t at; (at = text.find(tag)) != std::string::npos;) text.erase(at, tag.size());
    return {rank, is_err, std::move(text)};
  }
  return out;
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
