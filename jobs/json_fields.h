// Reading Kubernetes objects held as JSON without throwing: a missing key, or a value of another
// type, reads as null or "". For code that inspects objects whose shape the server decides (the
// operator's informer objects, the nodes and pods `dljob top nodes` reads). Pure; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dljob {

// j[key] when j is an object that has it, else a null.
inline const nlohmann::json& FieldOf(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// j[key] when it is a string, else "".
inline std::string StringAt(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = FieldOf(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

}  // namespace dljob
