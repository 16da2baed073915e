#include "jobs/json_reader.h"

#include <cmath>
#include <limits>

namespace dljob {
namespace {

// 2.0 is an integer; 2.5 and 1e30 are not (nullopt). *out_of_range says why.
std::optional<int64_t> AsInt(const nlohmann::json& v, bool* out_of_range) {
  *out_of_range = false;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      *out_of_range = true;
      return std::nullopt;
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_number_float()) return std::nullopt;
  double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d)) return std::nullopt;
  if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
    *out_of_range = true;
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

}  // namespace

std::string DescribeJson(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return "string " + Quote(value.get_ref<const std::string&>(), 60);
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? "boolean true" : "boolean false";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "number " + value.dump();
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "a list";
    default:
      return "null";
  }
}

void JsonReader::Error(const std::string& path, std::string reason) {
  errors_.push_back(FieldError{path, std::move(reason)});
}

void JsonReader::TypeError(const std::string& path, std::string_view expected, const json& value) {
  Error(path, "must be " + std::string(expected) + ", got " + DescribeJson(value));
}

const nlohmann::json* JsonReader::Get(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const nlohmann::json* JsonReader::Object(const json& value, const std::string& path,
                                         const std::vector<std::string_view>& known) {
  if (!value.is_object()) {
    TypeError(path, "an object", value);
    return nullptr;
  }
  for (const auto& [key, child] : value.items()) {
    bool is_known = false;
    for (std::string_view k : known) is_known = is_known || k == key;
    if (is_known) continue;
    std::string suggestion = SuggestName(key, known);
    Error(JoinKey(path, key), suggestion.empty()
                                  ? "unknown field"
                                  : "unknown field (did you mean \"" + suggestion + "\"?)");
  }
  return &value;
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::string& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  if (!v->is_string()) return TypeError(JoinKey(parent, key), "a string", *v);
  out = v->get<std::string>();
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::optional<std::string>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  if (!v->is_string()) return TypeError(JoinKey(parent, key), "a string", *v);
  out = v->get<std::string>();
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::optional<int64_t>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  bool out_of_range = false;
  std::optional<int64_t> i = AsInt(*v, &out_of_range);
  if (out_of_range) {
    return Error(JoinKey(parent, key), "must be an integer, got " + DescribeJson(*v) +
                                           " (out of range for a 64-bit integer)");
  }
  if (!i) return TypeError(JoinKey(parent, key), "an integer", *v);
  out = i;
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      int64_t& out) {
  std::optional<int64_t> value;
  Read(obj, key, parent, value);
  if (value) out = *value;
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::optional<bool>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  if (!v->is_boolean()) return TypeError(JoinKey(parent, key), "a boolean (true or false)", *v);
  out = v->get<bool>();
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::optional<double>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  if (!v->is_number() || !std::isfinite(v->get<double>())) {
    return TypeError(JoinKey(parent, key), "a finite number", *v);
  }
  out = v->get<double>();
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::vector<std::string>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  std::string path = JoinKey(parent, key);
  if (!v->is_array()) return TypeError(path, "a list of strings", *v);
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_string()) {
      TypeError(JoinIndex(path, i), "a string", item);
      continue;
    }
    out.push_back(item.get<std::string>());
  }
}

void JsonReader::Read(const json& obj, std::string_view key, const std::string& parent,
                      std::map<std::string, std::string>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  std::string path = JoinKey(parent, key);
  if (!v->is_object()) return TypeError(path, "a map of strings", *v);
  for (const auto& [k, item] : v->items()) {
    if (!item.is_string()) {
      TypeError(JoinKey(path, k), "a string", item);
      continue;
    }
    out[k] = item.get<std::string>();
  }
}

void JsonReader::ReadQuantity(const json& obj, std::string_view key, const std::string& parent,
                              std::optional<std::string>& out) {
  const json* v = Get(obj, key);
  if (v == nullptr) return;
  if (v->is_string()) {
    out = v->get<std::string>();
    return;
  }
  bool out_of_range = false;
  if (std::optional<int64_t> i = AsInt(*v, &out_of_range)) {
    out = std::to_string(*i);
  } else if (v->is_number() && std::isfinite(v->get<double>())) {
    out = v->dump();
  } else {
    TypeError(JoinKey(parent, key), "a quantity such as \"8\" or \"60Gi\"", *v);
  }
}

}  // namespace dljob
