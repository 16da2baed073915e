#include <charconv>
#include <cmath>
#include <limits>

#include <yaml-cpp/yaml.h>

#include "jobs/codec.h"
#include "jobs/yaml_tree.h"

namespace dljob {
namespace {

bool IsDigits(std::string_view s, bool (*digit)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!digit(c)) return false;
  }
  return true;
}
bool Dec(char c) { return c >= '0' && c <= '9'; }
bool Oct(char c) { return c >= '0' && c <= '7'; }
bool Hex(char c) { return Dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.remove_prefix(1);
    if (!IsDigits(exponent, Dec)) return false;
  }
  size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return IsDigits(mantissa, Dec);
  std::string_view whole = mantissa.substr(0, dot), frac = mantissa.substr(dot + 1);
  if (whole.empty()) return IsDigits(frac, Dec);
  return IsDigits(whole, Dec) && (frac.empty() || IsDigits(frac, Dec));
}

std::optional<nlohmann::json> ParseFloat(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec == std::errc::result_out_of_range) {
    // Underflow is a tiny number, not an error; overflow has no JSON form.
    if (s.find_first_of("eE") != std::string_view::npos && s[s.find_first_of("eE") + 1] == '-') {
      return nlohmann::json(0.0);
    }
    return std::nullopt;
  }
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  return nlohmann::json(d);
}

std::optional<nlohmann::json> ParseRadix(std::string_view digits, int base,
                                         const std::string& text) {
  uint64_t u = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
  if (ec != std::errc() || end != digits.data() + digits.size()) return nlohmann::json(text);
  if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return nlohmann::json(static_cast<int64_t>(u));
  }
  return nlohmann::json(u);
}

std::optional<nlohmann::json> ParseDecimal(const std::string& text) {
  std::string_view s = text;
  if (s[0] == '+') s.remove_prefix(1);
  int64_t i = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && end == s.data() + s.size()) return nlohmann::json(i);
  if (s[0] != '-') {
    uint64_t u = 0;
    auto [uend, uec] = std::from_chars(s.data(), s.data() + s.size(), u);
    if (uec == std::errc() && uend == s.data() + s.size()) return nlohmann::json(u);
  }
  // Too large for 64 bits: keep the magnitude as a float, or the text when even that overflows.
  std::optional<nlohmann::json> f = ParseFloat(s);
  return f ? f : nlohmann::json(text);
}

bool IsSafePlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || Dec(c) ||
         std::string_view("_./@+=,:-").find(c) != std::string_view::npos;
}

// Strings written without quotes: a conservative set that no YAML reader can misread, and that
// reads back as this same string (not a number, bool or null).
bool CanBePlain(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s) {
    if (!IsSafePlainChar(c)) return false;
  }
  char first = s.front();
  if (first == ':' || first == ',' || first == '@' || first == '=') return false;
  if (first == '-' && s.size() == 1) return false;
  if (s.back() == ':') return false;
  std::optional<nlohmann::json> typed = ResolvePlainScalar(s);
  return typed && typed->is_string();
}

void EmitString(YAML::Emitter& out, const std::string& s) {
  if (CanBePlain(s)) {
    out << s;
  } else {
    out << YAML::DoubleQuoted << s;
  }
}

void EmitNode(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::object:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& [key, child] : value.items()) {
        out << YAML::Key;
        EmitString(out, key);
        out << YAML::Value;
        EmitNode(out, child);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::ordered_json::value_t::array:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& child : value) EmitNode(out, child);
      out << YAML::EndSeq;
      break;
    case nlohmann::ordered_json::value_t::string:
      EmitString(out, value.get_ref<const std::string&>());
      break;
    case nlohmann::ordered_json::value_t::null:
    case nlohmann::ordered_json::value_t::discarded:
      out << YAML::Null;
      break;
    default:  // numbers and booleans: JSON's spelling is also YAML's
      out << value.dump();
      break;
  }
}

}  // namespace

std::optional<nlohmann::json> ResolvePlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string_view v = s;
  if (v.size() > 2 && v.substr(0, 2) == "0x" && IsDigits(v.substr(2), Hex)) {
    return ParseRadix(v.substr(2), 16, s);
  }
  if (v.size() > 2 && v.substr(0, 2) == "0o" && IsDigits(v.substr(2), Oct)) {
    return ParseRadix(v.substr(2), 8, s);
  }
  std::string_view unsigned_part = v.substr(v[0] == '-' || v[0] == '+' ? 1 : 0);
  if (IsDigits(unsigned_part, Dec)) return ParseDecimal(s);
  if (IsCoreFloat(v)) return ParseFloat(v);
  for (std::string_view inf : {".inf", ".Inf", ".INF"}) {
    if (unsigned_part == inf) return std::nullopt;
  }
  if (v == ".nan" || v == ".NaN" || v == ".NAN") return std::nullopt;
  return nlohmann::json(s);
}

std::string EmitYaml(const nlohmann::ordered_json& tree) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  EmitNode(out, tree);
  std::string text = out.good() ? std::string(out.c_str()) : std::string();
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

std::string JsonToYaml(const nlohmann::json& tree) {
  return EmitYaml(nlohmann::ordered_json(tree));
}

}  // namespace dljob
