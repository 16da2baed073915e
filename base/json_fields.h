// Reading JSON whose shape someone else decides without throwing: a missing key, or a value of
// another type, reads as null or "". The generic readers under kube/object_fields.h (an object's
// name, namespace, uid, labels) and under every other reader of server-shaped JSON (nodes and pods
// in scheduler/kube_objects.h, the operator's informer objects, the metrics). Pure; thread-safe.
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
