// Internal to jobs/: JsonReader, the path-tracking reader the DLJob decoder is built on.
//
// Each Read* call looks up one field of a JSON object, checks its type, stores the value and, on
// a mismatch, records a FieldError naming the field's path, what was expected and what was
// found (`spec.gpus: must be an integer, got string "two"`). A missing field or an explicit null
// leaves the output untouched, as Kubernetes does. Errors accumulate; nothing throws.
// Thread-compatible: one reader per decode.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/field_error.h"
#include "jobs/field_path.h"

namespace dljob {

class JsonReader {
 public:
  using json = nlohmann::json;

  explicit JsonReader(FieldErrors& errors) : errors_(errors) {}

  void Error(const std::string& path, std::string reason);
  // Records `must be <expected>, got <description of value>`.
  void TypeError(const std::string& path, std::string_view expected, const json& value);

  // The field's value, or nullptr when it is missing or null.
  static const json* Get(const json& obj, std::string_view key);

  // `value` when it is an object (after reporting every key not in `known`, with a suggestion
  // when one is close); nullptr after reporting a type error otherwise.
  const json* Object(const json& value, const std::string& path,
                     const std::vector<std::string_view>& known);

  void Read(const json& obj, std::string_view key, const std::string& parent, std::string& out);
  void Read(const json& obj, std::string_view key, const std::string& parent,
            std::optional<std::string>& out);
  void Read(const json& obj, std::string_view key, const std::string& parent, int64_t& out);
  void Read(const json& obj, std::string_view key, const std::string& parent,
            std::optional<int64_t>& out);
  void Read(const json& obj, std::string_view key, const std::string& parent,
            std::optional<bool>& out);
  void Read(const json& obj, std::string_view key, const std::string& parent,
            std::optional<double>& out);
  void Read(const json& obj, std::string_view key, const std::string& parent,
            std::vector<std::string>& out);
  void Read(const json& obj, std::string_view key, const std::string& parent,
            std::map<std::string, std::string>& out);
  // A Kubernetes quantity: a string, or a number kept as its decimal text (8 -> "8").
  void ReadQuantity(const json& obj, std::string_view key, const std::string& parent,
                    std::optional<std::string>& out);

  // A list of objects; decode(item_json, item_path, item) fills each element.
  template <typename T, typename F>
  void ReadList(const json& obj, std::string_view key, const std::string& parent,
                std::vector<T>& out, F&& decode) {
    const json* value = Get(obj, key);
    if (value == nullptr) return;
    std::string path = JoinKey(parent, key);
    if (!value->is_array()) return TypeError(path, "a list", *value);
    for (size_t i = 0; i < value->size(); ++i) {
      T item{};
      decode((*value)[i], JoinIndex(path, i), item);
      out.push_back(std::move(item));
    }
  }

 private:
  FieldErrors& errors_;
};

// "string \"two\"", "number 2.5", "boolean true", "null", "an object", "a list".
std::string DescribeJson(const nlohmann::json& value);

}  // namespace dljob
