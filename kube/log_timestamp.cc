// See log_timestamp.h.
#include "kube/log_timestamp.h"

namespace dljob::kube {

std::string StampLogLine(WallTime time, std::string_view text) {
  std::string out = FormatRfc3339Nanos(time);
  out += ' ';
  out += text;
  return out;
}

std::optional<StampedLogLine> SplitLogTimestamp(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::optional<WallTime> time = ParseRfc3339(std::string(line.substr(0, space)));
  if (!time) return std::nullopt;
  return StampedLogLine{*time, line.substr(space + 1)};
}

}  // namespace dljob::kube
