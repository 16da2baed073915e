// See crd_schema.h.
#include "tests/apiserver/crd_schema.h"

#include <cmath>
#include <regex>

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool Flag(const Json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

// Go's %v of a float64 the schema holds (minimum: 1 prints "1").
std::string Number(const Json& n) {
  if (n.is_number_float()) {
    double d = n.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
  }
  return n.dump();
}

// The JSON type name the real server reports for a value.
std::string TypeName(const Json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number_float()) return "number";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

bool IsIntegral(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  return v.is_number_float() && std::floor(v.get<double>()) == v.get<double>();
}

bool TypeMatches(const std::string& type, const Json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return IsIntegral(v);
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  return true;  // no type: anything
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

void PruneAt(const Json& schema, Json& value, const std::string& path, bool root,
             std::vector<std::string>* pruned) {
  if (!schema.is_object()) return;
  if (value.is_array()) {
    auto items = schema.find("items");
    if (items == schema.end()) return;
    for (size_t i = 0; i < value.size(); ++i)
      PruneAt(*items, value[i], Index(path, i), false, pruned);
    return;
  }
  if (!value.is_object()) return;
  bool preserve = Flag(schema, "x-kubernetes-preserve-unknown-fields") ||
                  Flag(schema, "x-kubernetes-embedded-resource");
  auto props = schema.find("properties");
  auto additional = schema.find("additionalProperties");
  std::vector<std::string> drop;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    if (root && (key == "apiVersion" || key == "kind" || key == "metadata")) continue;
    if (props != schema.end() && props->is_object() && props->contains(key)) {
      PruneAt((*props)[key], it.value(), Child(path, key), false, pruned);
    } else if (additional != schema.end() && additional->is_object()) {
      PruneAt(*additional, it.value(), Child(path, key), false, pruned);
    } else if (!preserve && !(additional != schema.end() && additional->is_boolean() &&
                              additional->get<bool>())) {
      drop.push_back(key);
    }
  }
  for (const std::string& key : drop) {
    pruned->push_back(Child(path, key));
    value.erase(key);
  }
}

class Validator {
 public:
  FieldErrors errors;

  void At(const Json& schema, const Json& v, const std::string& path, bool root) {
    if (!schema.is_object()) return;
    if (v.is_null()) {
      if (!Flag(schema, "nullable") && schema.contains("type")) {
        std::string type = schema.value("type", "");
        errors.push_back(Invalid(
            path, "null", path + " in body must be of type " + type + ": " + GoQuote("null")));
      }
      return;
    }
    std::string type = schema.value("type", "");
    if (Flag(schema, "x-kubernetes-int-or-string")) {
      if (!IsIntegral(v) && !v.is_string()) {
        errors.push_back(
            Invalid(path, TypeName(v),
                    path + " in body must be of type integer or string: " + GoQuote(TypeName(v))));
        return;
      }
    } else if (!type.empty() && !TypeMatches(type, v)) {
      errors.push_back(
          Invalid(path, TypeName(v),
                  path + " in body must be of type " + type + ": " + GoQuote(TypeName(v))));
      return;
    }
    Enum(schema, v, path);
    if (v.is_number()) Bounds(schema, v, path);
    if (v.is_string()) Strings(schema, v, path);
    if (v.is_array()) Array(schema, v, path);
    if (v.is_object()) Object(schema, v, path, root);
  }

 private:
  void Enum(const Json& schema, const Json& v, const std::string& path) {
    auto e = schema.find("enum");
    if (e == schema.end() || !e->is_array()) return;
    for (const Json& allowed : *e) {
      if (allowed == v) return;
    }
    std::vector<std::string> supported;
    for (const Json& allowed : *e) {
      supported.push_back(allowed.is_string() ? allowed.get<std::string>() : allowed.dump());
    }
    errors.push_back(NotSupported(path, v, supported));
  }

  void Bounds(const Json& schema, const Json& v, const std::string& path) {
    double x = v.get<double>();
    auto min = schema.find("minimum");
    if (min != schema.end() && min->is_number()) {
      bool exclusive = Flag(schema, "exclusiveMinimum");
      double m = min->get<double>();
      if (exclusive ? x <= m : x < m) {
        errors.push_back(Invalid(path, v,
                                 path + " in body should be greater than " +
                                     (exclusive ? "" : "or equal to ") + Number(*min)));
      }
    }
    auto max = schema.find("maximum");
    if (max != schema.end() && max->is_number()) {
      bool exclusive = Flag(schema, "exclusiveMaximum");
      double m = max->get<double>();
      if (exclusive ? x >= m : x > m) {
        errors.push_back(Invalid(path, v,
                                 path + " in body should be less than " +
                                     (exclusive ? "" : "or equal to ") + Number(*max)));
      }
    }
  }

  void Strings(const Json& schema, const Json& v, const std::string& path) {
    const std::string& s = v.get_ref<const std::string&>();
    size_t n = CodePoints(s);
    if (schema.contains("minLength") && schema["minLength"].is_number() &&
        n < schema["minLength"].get<size_t>()) {
      errors.push_back(Invalid(
          path, v,
          path + " in body should be at least " + Number(schema["minLength"]) + " chars long"));
    }
    if (schema.contains("maxLength") && schema["maxLength"].is_number() &&
        n > schema["maxLength"].get<size_t>()) {
      errors.push_back(Invalid(
          path, v,
          path + " in body should be at most " + Number(schema["maxLength"]) + " chars long"));
    }
    if (schema.contains("pattern") && schema["pattern"].is_string()) {
      const std::string& pattern = schema["pattern"].get_ref<const std::string&>();
      try {
        if (!std::regex_search(s, std::regex(pattern, std::regex::ECMAScript))) {
          errors.push_back(Invalid(path, v, path + " in body should match '" + pattern + "'"));
        }
      } catch (const std::regex_error&) {
        // A pattern std::regex cannot read: the CRD's author meant RE2; not checked here.
      }
    }
  }

  void Array(const Json& schema, const Json& v, const std::string& path) {
    if (schema.contains("minItems") && schema["minItems"].is_number() &&
        v.size() < schema["minItems"].get<size_t>()) {
      errors.push_back(
          Invalid(path, static_cast<int64_t>(v.size()),
                  path + " in body should have at least " + Number(schema["minItems"]) + " items"));
    }
    if (schema.contains("maxItems") && schema["maxItems"].is_number() &&
        v.size() > schema["maxItems"].get<size_t>()) {
      errors.push_back({FieldError::Type::kTooMany, path, std::to_string(v.size()),
                        "must have at most " + Number(schema["maxItems"]) + " items"});
    }
    if (Flag(schema, "uniqueItems")) {
      for (size_t i = 0; i < v.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (v[i] == v[j]) {
            errors.push_back(Duplicate(Index(path, i), v[i]));
            break;
          }
        }
      }
    }
    auto items = schema.find("items");
    if (items == schema.end()) return;
    for (size_t i = 0; i < v.size(); ++i) At(*items, v[i], Index(path, i), false);
  }

  // A CRD may restrict only metadata.name and metadata.generateName; the rest of metadata is
  // the API server's own (validated as for every kind, not by the schema).
  void Metadata(const Json& schema, const Json& v) {
    if (!v.is_object() || !schema.contains("properties")) return;
    const Json& props = schema["properties"];
    for (const char* key : {"name", "generateName"}) {
      if (v.contains(key) && props.contains(key)) {
        At(props[key], v[key], std::string("metadata.") + key, false);
      }
    }
  }

  void Object(const Json& schema, const Json& v, const std::string& path, bool root) {
    if (schema.contains("required") && schema["required"].is_array()) {
      for (const Json& key : schema["required"]) {
        if (key.is_string() && !v.contains(key.get<std::string>())) {
          errors.push_back(Required(Child(path, key.get<std::string>())));
        }
      }
    }
    if (schema.contains("minProperties") && schema["minProperties"].is_number() &&
        v.size() < schema["minProperties"].get<size_t>()) {
      errors.push_back(Invalid(path, static_cast<int64_t>(v.size()),
                               path + " in body should have at least " +
                                   Number(schema["minProperties"]) + " properties"));
    }
    if (schema.contains("maxProperties") && schema["maxProperties"].is_number() &&
        v.size() > schema["maxProperties"].get<size_t>()) {
      errors.push_back(Invalid(path, static_cast<int64_t>(v.size()),
                               path + " in body should have at most " +
                                   Number(schema["maxProperties"]) + " properties"));
    }
    auto props = schema.find("properties");
    auto additional = schema.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (root && (it.key() == "apiVersion" || it.key() == "kind")) continue;
      if (root && it.key() == "metadata") {
        Metadata(props != schema.end() ? props->value("metadata", Json::object()) : Json::object(),
                 it.value());
        continue;
      }
      if (props != schema.end() && props->is_object() && props->contains(it.key())) {
        At((*props)[it.key()], it.value(), Child(path, it.key()), false);
      } else if (additional != schema.end() && additional->is_object()) {
        At(*additional, it.value(), Child(path, it.key()), false);
      }
    }
  }
};

}  // namespace

std::vector<std::string> PruneUnknownFields(const Json& schema, Json& object) {
  std::vector<std::string> pruned;
  PruneAt(schema, object, "", /*root=*/true, &pruned);
  return pruned;
}

FieldErrors ValidateAgainstSchema(const Json& schema, const Json& object) {
  Validator v;
  v.At(schema, object, "", /*root=*/true);
  return std::move(v.errors);
}

}  // namespace dljob::apiserver
