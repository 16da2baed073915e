#include "base/human_format.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace dljob {

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    return buf;
  }
  // The largest unit whose number, rounded to the one decimal shown, stays under 1024: so
  // 1048575 bytes read "1.0 MiB", not "1024.0 KiB".
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB"};
  double value = static_cast<double>(n) / 1024;
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && value >= 1023.95) {
    value /= 1024;
    ++unit;
  }
  std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string ClockDuration(std::chrono::seconds d) {
  const long long s = d.count() < 0 ? 0 : static_cast<long long>(d.count());
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace dljob
