#include "base/time_format.h"

#include <cstdio>
#include <ctime>

namespace dljob {

std::string FormatRfc3339(WallTime t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatRfc3339Micros(WallTime t) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t - seconds);
  std::string base = FormatRfc3339(seconds);
  // micros is in [0, 999999] (six digits), but the compiler cannot prove it: room for any value.
  char frac[24];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(micros.count()));
  return base.substr(0, base.size() - 1) + frac + "Z";  // base ends in 'Z'
}

std::string FormatRfc3339Nanos(WallTime t) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(t - seconds);
  std::string base = FormatRfc3339(seconds);
  char frac[24];  // nanos is in [0, 999999999]; room for any value
  std::snprintf(frac, sizeof frac, ".%09lld", static_cast<long long>(nanos.count()));
  return base.substr(0, base.size() - 1) + frac + "Z";
}

std::optional<WallTime> ParseRfc3339(const std::string& s) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return std::nullopt;
  }
  size_t i = 19;
  int64_t nanos = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t digits = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
      if (digits < 9) nanos = nanos * 10 + (s[i] - '0');  // digits past nanoseconds are dropped
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 9; ++digits) nanos *= 10;
  }
  long offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    int hh = 0, mm = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2 || hh > 23 || mm > 59) {
      return std::nullopt;
    }
    offset = (s[i] == '+' ? 1 : -1) * (hh * 3600L + mm * 60L);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t tt = timegm(&tm);
  return std::chrono::system_clock::from_time_t(tt - offset) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::nanoseconds(nanos));
}

int64_t UnixSeconds(WallTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string HumanDuration(std::chrono::seconds d) {
  long long s = d.count();
  if (s < 0) s = 0;
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    long long m = s / 60, r = s % 60;
    if (r == 0 || m >= 10)
      std::snprintf(buf, sizeof buf, "%lldm", m);
    else
      std::snprintf(buf, sizeof buf, "%lldm%llds", m, r);
  } else if (s < 48 * 3600) {
    long long h = s / 3600, m = (s % 3600) / 60;
    if (m == 0 || h >= 8)
      std::snprintf(buf, sizeof buf, "%lldh", h);
    else
      std::snprintf(buf, sizeof buf, "%lldh%lldm", h, m);
  } else {
    long long days = s / 86400, h = (s % 86400) / 3600;
    if (h == 0 || days >= 8)
      std::snprintf(buf, sizeof buf, "%lldd", days);
    else
      std::snprintf(buf, sizeof buf, "%lldd%lldh", days, h);
  }
  return buf;
}

}  // namespace dljob
