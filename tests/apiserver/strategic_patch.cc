// See strategic_patch.h.
#include "tests/apiserver/strategic_patch.h"

#include <string>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

bool AllNamed(const Json& list) {
  if (!list.is_array()) return false;
  for (const Json& e : list) {
    if (!e.is_object() || !e.contains("name")) return false;
  }
  return true;
}

Json MergeNamedLists(const Json& target, const Json& patch) {
  Json out = target;
  for (const Json& p : patch) {
    bool remove = p.value("$patch", "") == "delete";
    bool found = false;
    for (size_t i = 0; i < out.size() && !found; ++i) {
      if (out[i]["name"] != p["name"]) continue;
      found = true;
      if (remove) {
        out.erase(i);
      } else {
        out[i] = ApplyStrategicPatch(out[i], p);
      }
    }
    if (!found && !remove) out.push_back(ApplyStrategicPatch(Json::object(), p));
  }
  return out;
}

}  // namespace

Json ApplyStrategicPatch(const Json& target, const Json& patch) {
  if (!patch.is_object()) return patch;
  if (patch.value("$patch", "") == "replace") {
    Json copy = patch;
    copy.erase("$patch");
    return ApplyStrategicPatch(Json::object(), copy);
  }
  Json out = target.is_object() ? target : Json::object();
  for (const auto& [key, value] : patch.items()) {
    if (!key.empty() && key[0] == '$') continue;
    if (value.is_null()) {
      out.erase(key);
    } else if (value.is_array() && out.contains(key) && AllNamed(value) && AllNamed(out[key]) &&
               !value.empty()) {
      out[key] = MergeNamedLists(out[key], value);
    } else if (value.is_object()) {
      out[key] = ApplyStrategicPatch(out.contains(key) ? out[key] : Json::object(), value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

}  // namespace dljob::apiserver
