// A pod log line as the kubelet serves it with `timestamps=true` (kube::LogOptions::timestamps):
// the time the container wrote it, RFC 3339 with nine fractional digits, a space, then the line
// ("2026-11-27T08:50:42.123456789Z epoch 1 starting"). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/time_format.h"

namespace dljob::kube {

struct StampedLogLine {
  WallTime time;
  std::string_view text;  // a view into the line given to SplitLogTimestamp
};

// The line with its time stamp prefixed.
std::string StampLogLine(WallTime time, std::string_view text);
// The time and the text of a stamped line; nullopt when it does not start with a time and a
// space (a server that does not stamp lines).
std::optional<StampedLogLine> SplitLogTimestamp(std::string_view line);

}  // namespace dljob::kube
