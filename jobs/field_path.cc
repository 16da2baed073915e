#include "jobs/field_path.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace dljob {
namespace {

bool IsIdentifierLike(std::string_view key) {
  if (key.empty()) return false;
  auto first = static_cast<unsigned char>(key[0]);
  if (!std::isalpha(first) && first != '_') return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_' || c == '-';
  });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string JoinField(const std::string& parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  std::string out = parent;
  out += '.';
  out += name;
  return out;
}

std::string JoinOr(std::span<const std::string_view> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string JoinIndex(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string JoinKey(const std::string& parent, std::string_view key) {
  if (IsIdentifierLike(key)) return JoinField(parent, key);
  return parent + "[" + std::string(key) + "]";
}

std::string Quote(std::string_view value, size_t max_len) {
  std::string out = "\"";
  size_t shown = 0;
  for (char c : value) {
    if (shown >= max_len) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
    ++shown;
  }
  out += '"';
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions ("spce" -> "spec" is 1).
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string SuggestName(std::string_view name, const std::vector<std::string_view>& candidates) {
  if (name.size() > 64) return "";
  std::string lower = Lower(name);
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view candidate : candidates) {
    if (Lower(candidate) == lower) return std::string(candidate);
    size_t d = EditDistance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  if (best_distance <= 2 && best_distance * 2 < std::max(name.size(), best.size())) return best;
  return "";
}

}  // namespace dljob
