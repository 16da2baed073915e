// See json_path.h.
#include "tests/apiserver/json_path.h"

#include <cctype>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

// Applies one bracket step ("0", "?(@.type==\"Ready\")") to an array.
const Json* Index(const Json& node, const std::string& step) {
  if (!node.is_array()) return nullptr;
  if (!step.empty() && std::isdigit(static_cast<unsigned char>(step[0]))) {
    size_t i = std::stoul(step);
    return i < node.size() ? &node[i] : nullptr;
  }
  // ?(@.field=="value")
  if (step.rfind("?(@.", 0) != 0 || step.back() != ')') return nullptr;
  std::string cond = step.substr(4, step.size() - 5);
  size_t eq = cond.find("==");
  if (eq == std::string::npos) return nullptr;
  std::string field = cond.substr(0, eq);
  std::string value = cond.substr(eq + 2);
  if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'')) {
    value = value.substr(1, value.size() - 2);
  }
  for (const Json& e : node) {
    if (!e.is_object() || !e.contains(field)) continue;
    const Json& f = e[field];
    if ((f.is_string() && f.get<std::string>() == value) || (!f.is_string() && f.dump() == value)) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace

Json SimpleJsonPath(const Json& object, const std::string& path) {
  std::string p = path;
  if (p.size() >= 2 && p.front() == '{' && p.back() == '}') p = p.substr(1, p.size() - 2);
  const Json* node = &object;
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == '.') {
      ++i;
      size_t end = p.find_first_of(".[", i);
      std::string key = p.substr(i, end == std::string::npos ? std::string::npos : end - i);
      if (key.empty()) return nullptr;
      if (!node->is_object() || !node->contains(key)) return nullptr;
      node = &(*node)[key];
      i = end == std::string::npos ? p.size() : end;
    } else if (p[i] == '[') {
      // The step ends at the ']' that closes it (a filter may hold quoted brackets: not supported).
      size_t close = p.find(']', i);
      if (close == std::string::npos) return nullptr;
      node = Index(*node, p.substr(i + 1, close - i - 1));
      if (!node) return nullptr;
      i = close + 1;
    } else {
      return nullptr;
    }
  }
  return *node;
}

}  // namespace dljob::apiserver
