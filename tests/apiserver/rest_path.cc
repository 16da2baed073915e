// See rest_path.h.
#include "tests/apiserver/rest_path.h"

#include <vector>

namespace dljob::apiserver {
namespace {

std::vector<std::string> Segments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) out.emplace_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

RestPath ParseRestPath(std::string_view path) {
  RestPath out;
  std::vector<std::string> s = Segments(path);
  size_t rest = 0;
  if (s.size() == 1 && s[0] == "version") {
    out.kind = RestPath::Kind::kVersion;
    return out;
  }
  if (!s.empty() && s[0] == "api") {
    if (s.size() == 1) {
      out.kind = RestPath::Kind::kApiVersions;
      return out;
    }
    out.version = s[1];
    rest = 2;
  } else if (!s.empty() && s[0] == "apis") {
    if (s.size() == 1) {
      out.kind = RestPath::Kind::kGroupList;
      return out;
    }
    out.group = s[1];
    if (s.size() == 2) {
      out.kind = RestPath::Kind::kGroup;
      return out;
    }
    out.version = s[2];
    rest = 3;
  } else {
    return out;
  }
  std::vector<std::string> r(s.begin() + rest, s.end());
  if (r.empty()) {
    out.kind = RestPath::Kind::kResourceList;
    return out;
  }
  size_t i = 0;
  // namespaces/{ns}/{plural}/..., unless it names the namespace's own subresource.
  if (r.size() >= 3 && r[0] == "namespaces" && r[2] != "status" && r[2] != "finalize") {
    out.ns = r[1];
    i = 2;
  }
  if (r.size() - i > 3) return out;
  out.kind = RestPath::Kind::kResource;
  out.plural = r[i];
  if (r.size() - i > 1) out.name = r[i + 1];
  if (r.size() - i > 2) out.subresource = r[i + 2];
  return out;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

QueryParams ParseQuery(std::string_view query) {
  QueryParams out;
  size_t start = 0;
  while (start < query.size()) {
    size_t amp = query.find('&', start);
    std::string_view part =
        query.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    if (!part.empty()) {
      size_t eq = part.find('=');
      if (eq == std::string_view::npos) {
        out[PercentDecode(part)] = "";
      } else {
        out[PercentDecode(part.substr(0, eq))] = PercentDecode(part.substr(eq + 1));
      }
    }
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  return out;
}

bool QueryFlag(const QueryParams& query, const std::string& key) {
  auto it = query.find(key);
  return it != query.end() && (it->second == "true" || it->second == "1");
}

}  // namespace dljob::apiserver
