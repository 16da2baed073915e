// Internal to jobs/: the YAML <-> JSON-tree conversion behind codec.h's YamlToJson/JsonToYaml,
// with the extras the decoder needs — where each field was written, and how many documents the
// stream held.
//
// Parsing walks yaml-cpp's event stream (not YAML::Node), so that it sees every duplicate key,
// knows which scalars were quoted, and can bound alias expansion ("billion laughs") instead of
// materialising it. Pure functions; thread-safe. Never throws.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dljob {

// Documents whose alias expansion would exceed this many nodes are rejected.
inline constexpr size_t kMaxYamlNodes = 200000;

// A position in the source text, 1-based (0 when unknown).
struct TextPosition {
  int line = 0;
  int column = 0;
};

struct YamlParse {
  nlohmann::json tree;  // the first document (null when there is none)
  int documents = 0;    // how many documents the stream held
  // Where each node of the first document starts, by field path (field_path.h): the value's
  // position, and for mapping entries also the key's. The root is path "".
  std::map<std::string, TextPosition> values;
  std::map<std::string, TextPosition> keys;
  // Set on failure (syntax error, duplicate key, non-scalar key, ...); tree is then unusable.
  std::optional<std::string> error;
  TextPosition error_at;
};

// REQUIRES: nothing; any bytes are accepted and either parse or yield an error.
YamlParse ParseYaml(std::string_view text, bool record_positions);

// Types a plain (unquoted) scalar by the YAML 1.2 core schema: null, bool, int (decimal, 0x, 0o),
// float, else string. Returns nullopt for a number JSON cannot hold (.inf, .nan, 1e999).
std::optional<nlohmann::json> ResolvePlainScalar(const std::string& text);

// Block-style YAML for a tree, keys in the tree's order. Strings that would read back as another
// type (or need escaping) are double-quoted, so ParseYaml(EmitYaml(t)).tree == t.
std::string EmitYaml(const nlohmann::ordered_json& tree);

}  // namespace dljob
