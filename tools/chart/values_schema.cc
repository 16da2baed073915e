// See values_schema.h.
#include "tools/chart/values_schema.h"

#include <cmath>
#include <regex>
#include <set>

namespace dljob::chart {
namespace {

using nlohmann::json;

constexpr size_t kMaxPatternInput = 1024;

const std::set<std::string>& KnownKeywords() {
  static const std::set<std::string> kKnown = {"type",        "properties", "additionalProperties",
                                               "required",    "enum",       "minimum",
                                               "maximum",     "minLength",  "items",
                                               "pattern",     "$schema",    "title",
                                               "description", "default",    "examples"};
  return kKnown;
}

std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

bool IsInteger(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

// The JSON Schema type name of a value, as Helm's checker reports it ("got string").
std::string TypeOf(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number()) return IsInteger(v) ? "integer" : "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

bool HasType(const json& v, const std::string& type) {
  if (type == "number") return v.is_number();
  if (type == "integer") return IsInteger(v);
  return TypeOf(v) == type;
}

// A value as Helm quotes it in a message: strings in single quotes, the rest as JSON.
std::string Shown(const json& v) {
  return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
}

std::string QuotedList(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

std::string Number(double d) {
  json v = d;
  if (IsInteger(v) && std::fabs(d) < 1e15) return std::to_string(static_cast<long long>(d));
  return v.dump();
}

class Checker {
 public:
  explicit Checker(std::vector<SchemaViolation>& out) : out_(out) {}

  // `where` is the schema's own location, for errors in the schema.
  Status Check(const json& schema, const json& value, const std::string& at,
               const std::string& where, int depth) {
    if (depth > kMaxSchemaDepth) {
      out_.push_back({at, "nested deeper than " + std::to_string(kMaxSchemaDepth) + " levels"});
      return Status::Ok();
    }
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) out_.push_back({at, "false schema"});
      return Status::Ok();
    }
    if (!schema.is_object()) return Bad(where, "a schema must be an object or a boolean");
    for (const auto& [keyword, unused] : schema.items()) {
      if (!KnownKeywords().count(keyword)) {
        return Bad(where, "keyword \"" + keyword + "\" is not supported by dljob-render-chart");
      }
    }
    if (auto it = schema.find("type"); it != schema.end()) {
      std::vector<std::string> types;
      if (it->is_string()) {
        types.push_back(*it);
      } else if (it->is_array()) {
        for (const json& t : *it) {
          if (!t.is_string()) return Bad(where + "/type", "not a type name");
          types.push_back(t);
        }
      } else {
        return Bad(where + "/type", "not a type name or a list of them");
      }
      bool ok = false;
      for (const std::string& t : types) ok = ok || HasType(value, t);
      if (!ok) {
        std::string want;
        for (const std::string& t : types) want += (want.empty() ? "" : " or ") + t;
        out_.push_back({at, "got " + TypeOf(value) + ", want " + want});
        return Status::Ok();  // the other keywords would only repeat the point
      }
    }
    if (auto it = schema.find("enum"); it != schema.end()) {
      if (!it->is_array() || it->empty()) return Bad(where + "/enum", "not a non-empty list");
      if (std::find(it->begin(), it->end(), value) == it->end()) {
        std::string allowed;
        for (const json& e : *it) allowed += (allowed.empty() ? "" : ", ") + Shown(e);
        out_.push_back(
            {at, it->size() == 1 ? "value must be " + allowed : "value must be one of " + allowed});
      }
    }
    if (value.is_number()) {
      for (const char* bound : {"minimum", "maximum"}) {
        auto it = schema.find(bound);
        if (it == schema.end()) continue;
        if (!it->is_number()) return Bad(where + "/" + bound, "not a number");
        double limit = it->get<double>();
        double got = value.get<double>();
        bool min = std::string(bound) == "minimum";
        if (min ? got < limit : got > limit) {
          out_.push_back({at, std::string(min ? "must be >= " : "must be <= ") + Number(limit) +
                                  " but found " + Number(got)});
        }
      }
    }
    if (value.is_string()) {
      const std::string& s = value.get_ref<const std::string&>();
      if (auto it = schema.find("minLength"); it != schema.end()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 0) {
          return Bad(where + "/minLength", "not a count");
        }
        if (s.size() < it->get<uint64_t>()) {
          out_.push_back({at, "length must be >= " + std::to_string(it->get<uint64_t>()) +
                                  ", but got " + std::to_string(s.size())});
        }
      }
      if (auto it = schema.find("pattern"); it != schema.end()) {
        if (!it->is_string()) return Bad(where + "/pattern", "not a string");
        std::regex re;
        try {
          re = std::regex(it->get<std::string>(), std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return Bad(where + "/pattern", std::string("not a regular expression: ") + e.what());
        }
        // std::regex recurses per character: a long value is refused rather than matched.
        bool found = false;
        if (s.size() > kMaxPatternInput) {
          out_.push_back({at, "longer than " + std::to_string(kMaxPatternInput) +
                                  " characters, too long to match pattern " + Shown(*it)});
          found = true;
        } else {
          try {
            found = std::regex_search(s, re);
          } catch (const std::regex_error&) {  // e.g. error_complexity
          }
        }
        if (!found) {
          out_.push_back({at, Shown(value) + " does not match pattern " + Shown(*it)});
        }
      }
    }
    if (value.is_object()) {
      if (Status s = CheckObject(schema, value, at, where, depth); !s.ok()) return s;
    }
    if (value.is_array()) {
      if (auto it = schema.find("items"); it != schema.end()) {
        for (size_t i = 0; i < value.size(); ++i) {
          if (Status s =
                  Check(*it, value[i], at + "/" + std::to_string(i), where + "/items", depth + 1);
              !s.ok()) {
            return s;
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  Status CheckObject(const json& schema, const json& value, const std::string& at,
                     const std::string& where, int depth) {
    const json empty = json::object();
    auto props_it = schema.find("properties");
    const json& props = props_it == schema.end() ? empty : *props_it;
    if (!props.is_object()) return Bad(where + "/properties", "not an object");
    if (auto it = schema.find("required"); it != schema.end()) {
      if (!it->is_array()) return Bad(where + "/required", "not a list");
      std::vector<std::string> missing;
      for (const json& name : *it) {
        if (!name.is_string()) return Bad(where + "/required", "not a list of names");
        if (!value.contains(name.get<std::string>())) missing.push_back(name);
      }
      if (!missing.empty()) {
        out_.push_back(
            {at, std::string(missing.size() == 1 ? "missing property " : "missing properties ") +
                     QuotedList(missing)});
      }
    }
    auto extra_it = schema.find("additionalProperties");
    std::vector<std::string> refused;
    for (const auto& [key, item] : value.items()) {
      const std::string item_at = at + "/" + PointerToken(key);
      if (auto p = props.find(key); p != props.end()) {
        if (Status s =
                Check(*p, item, item_at, where + "/properties/" + PointerToken(key), depth + 1);
            !s.ok()) {
          return s;
        }
      } else if (extra_it != schema.end()) {
        if (extra_it->is_boolean() && !extra_it->get<bool>()) {
          refused.push_back(key);
        } else if (Status s =
                       Check(*extra_it, item, item_at, where + "/additionalProperties", depth + 1);
                   !s.ok()) {
          return s;
        }
      }
    }
    if (!refused.empty()) {
      out_.push_back({at, "additional properties " + QuotedList(refused) + " not allowed"});
    }
    return Status::Ok();
  }

  static Status Bad(const std::string& where, const std::string& what) {
    return Status::InvalidArgument("values.schema.json at '" + where + "': " + what);
  }

  std::vector<SchemaViolation>& out_;
};

}  // namespace

Result<std::vector<SchemaViolation>> CheckAgainstSchema(const json& schema, const json& values) {
  std::vector<SchemaViolation> out;
  Checker checker(out);
  if (Status s = checker.Check(schema, values, "", "", 0); !s.ok()) return s;
  return out;
}

Status ValidateValues(const json& schema, const json& values, const std::string& chart_name) {
  Result<std::vector<SchemaViolation>> found = CheckAgainstSchema(schema, values);
  if (!found.ok()) return found.status();
  if (found->empty()) return Status::Ok();
  std::string message =
      "values don't meet the specifications of the schema(s) in the following chart(s):\n" +
      chart_name + ":";
  for (const SchemaViolation& v : *found) message += "\n- at '" + v.at + "': " + v.message;
  return Status::InvalidArgument(message);
}

}  // namespace dljob::chart
