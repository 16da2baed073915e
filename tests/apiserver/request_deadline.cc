// See request_deadline.h.
#include "tests/apiserver/request_deadline.h"

#include <cctype>
#include <cmath>
#include <utility>

namespace dljob::apiserver {
namespace {

// Nanoseconds per unit, longest names first so that "ms" is not read as "m".
constexpr std::pair<std::string_view, double> kUnits[] = {
    {"ns", 1.0}, {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"\xCE\xBCs", 1e3},
    {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9},
};

}  // namespace

std::optional<std::chrono::nanoseconds> ParseGoDuration(std::string_view text) {
  double sign = 1;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    if (text.front() == '-') sign = -1;
    text.remove_prefix(1);
  }
  if (text == "0") return std::chrono::nanoseconds(0);
  if (text.empty()) return std::nullopt;
  double total = 0;
  while (!text.empty()) {
    size_t digits = 0;
    bool any = false, dot = false;
    while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                    (text[digits] == '.' && !dot))) {
      if (text[digits] == '.') {
        dot = true;
      } else {
        any = true;
      }
      ++digits;
    }
    if (!any) return std::nullopt;
    double value = std::stod(std::string(text.substr(0, digits)));
    text.remove_prefix(digits);
    bool found = false;
    for (const auto& [unit, ns] : kUnits) {
      if (text.rfind(unit, 0) == 0) {
        total += value * ns;
        text.remove_prefix(unit.size());
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;  // a number without a unit
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(sign * total)));
}

ApiResult<std::optional<std::chrono::nanoseconds>> RequestTimeout(std::string_view path,
                                                                  const QueryParams& query) {
  auto it = query.find("timeout");
  if (it == query.end() || it->second.empty()) return std::optional<std::chrono::nanoseconds>();
  if (QueryFlag(query, "watch")) return std::optional<std::chrono::nanoseconds>();
  RestPath rest = ParseRestPath(path);
  if (rest.kind == RestPath::Kind::kResource && rest.subresource == "log") {
    return std::optional<std::chrono::nanoseconds>();
  }
  std::optional<std::chrono::nanoseconds> timeout = ParseGoDuration(it->second);
  if (!timeout) {
    return BadRequestError(
        "invalid timeout specified in the request URL - time: invalid duration \"" + it->second +
        "\"");
  }
  if (timeout->count() <= 0) return std::optional<std::chrono::nanoseconds>();
  return timeout;
}

ApiError RequestTimedOut() {
  return ErrorForCode(504,
                      "Timeout: request did not complete within the requested timeout - context "
                      "deadline exceeded");
}

}  // namespace dljob::apiserver
