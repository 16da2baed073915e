// See field_errors.h.
#include "tests/apiserver/field_errors.h"

#include <cstdio>

namespace dljob::apiserver {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])? — also the shape of each dot-separated part of a subdomain.
bool IsLowerLabel(const std::string& s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] (non-empty).
bool IsQualifiedNamePart(const std::string& s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string MaxLength(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

const char kDns1123LabelMessage[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const char kDns1123SubdomainMessage[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char kDns1035LabelMessage[] =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const char kQualifiedNameRule[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const char kLabelValueMessage[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

}  // namespace

std::string FieldError::CauseType() const {
  switch (type) {
    case Type::kRequired:
      return "FieldValueRequired";
    case Type::kInvalid:
      return "FieldValueInvalid";
    case Type::kNotSupported:
      return "FieldValueNotSupported";
    case Type::kNotFound:
      return "FieldValueNotFound";
    case Type::kTooLong:
      return "FieldValueTooLong";
    case Type::kDuplicate:
      return "FieldValueDuplicate";
    case Type::kForbidden:
      return "FieldValueForbidden";
    case Type::kTooMany:
      return "FieldValueTooMany";
  }
  return "FieldValueInvalid";
}

std::string FieldError::Body() const {
  std::string head;
  bool with_value = false;
  switch (type) {
    case Type::kRequired:
      head = "Required value";
      break;
    case Type::kInvalid:
      head = "Invalid value";
      with_value = true;
      break;
    case Type::kNotSupported:
      head = "Unsupported value";
      with_value = true;
      break;
    case Type::kNotFound:
      head = "Not found";
      with_value = true;
      break;
    case Type::kTooLong:
      head = "Too long";
      break;
    case Type::kDuplicate:
      head = "Duplicate value";
      with_value = true;
      break;
    case Type::kForbidden:
      head = "Forbidden";
      break;
    case Type::kTooMany:
      head = "Too many";
      with_value = true;
      break;
  }
  std::string body = head;
  if (with_value) body += ": " + value;
  if (!detail.empty()) body += ": " + detail;
  return body;
}

std::string FieldError::ToString() const { return field + ": " + Body(); }

std::string GoQuote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string GoValue(const nlohmann::json& value) {
  if (value.is_string()) return GoQuote(value.get<std::string>());
  if (value.is_null()) return "\"null\"";
  return value.dump();
}

FieldError Required(std::string field, std::string detail) {
  return {FieldError::Type::kRequired, std::move(field), "", std::move(detail)};
}

FieldError Invalid(std::string field, const nlohmann::json& value, std::string detail) {
  return {FieldError::Type::kInvalid, std::move(field), GoValue(value), std::move(detail)};
}

FieldError NotSupported(std::string field, const nlohmann::json& value,
                        const std::vector<std::string>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(supported[i]);
    }
  }
  return {FieldError::Type::kNotSupported, std::move(field), GoValue(value), std::move(detail)};
}

FieldError TooLong(std::string field, size_t max_bytes) {
  return {FieldError::Type::kTooLong, std::move(field), "",
          "must have at most " + std::to_string(max_bytes) + " bytes"};
}

FieldError Duplicate(std::string field, const nlohmann::json& value) {
  return {FieldError::Type::kDuplicate, std::move(field), GoValue(value), ""};
}

FieldError NotFound(std::string field, const nlohmann::json& value) {
  return {FieldError::Type::kNotFound, std::move(field), GoValue(value), ""};
}

FieldError Forbidden(std::string field, std::string detail) {
  return {FieldError::Type::kForbidden, std::move(field), "", std::move(detail)};
}

InvalidStatus MakeInvalid(const std::string& kind, const std::string& group,
                          const std::string& name, const FieldErrors& errors) {
  std::string qualified = group.empty() ? kind : kind + "." + group;
  std::string aggregate;
  if (errors.size() == 1) {
    aggregate = errors[0].ToString();
  } else {
    aggregate = "[";
    for (size_t i = 0; i < errors.size(); ++i) {
      if (i > 0) aggregate += ", ";
      aggregate += errors[i].ToString();
    }
    aggregate += "]";
  }
  nlohmann::json causes = nlohmann::json::array();
  for (const FieldError& e : errors) {
    causes.push_back({{"reason", e.CauseType()}, {"message", e.Body()}, {"field", e.field}});
  }
  nlohmann::json details = {{"name", name}, {"kind", kind}, {"causes", causes}};
  if (!group.empty()) details["group"] = group;
  return {{422, "Invalid", qualified + " " + GoQuote(name) + " is invalid: " + aggregate},
          std::move(details)};
}

std::vector<std::string> Dns1123Label(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 63) why.push_back(MaxLength(63));
  if (!IsLowerLabel(value)) why.push_back(kDns1123LabelMessage);
  return why;
}

std::vector<std::string> Dns1123Subdomain(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 253) why.push_back(MaxLength(253));
  bool ok = !value.empty();
  for (size_t start = 0; ok && start <= value.size();) {
    size_t dot = value.find('.', start);
    size_t end = dot == std::string::npos ? value.size() : dot;
    ok = IsLowerLabel(value.substr(start, end - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!ok) why.push_back(kDns1123SubdomainMessage);
  return why;
}

std::vector<std::string> Dns1035Label(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 63) why.push_back(MaxLength(63));
  if (!IsLowerLabel(value) || !(value.front() >= 'a' && value.front() <= 'z')) {
    why.push_back(kDns1035LabelMessage);
  }
  return why;
}

std::vector<std::string> QualifiedName(const std::string& value) {
  std::vector<std::string> why;
  std::string name = value;
  size_t slash = value.find('/');
  if (slash != std::string::npos) {
    if (value.find('/', slash + 1) != std::string::npos) {
      why.push_back(std::string("a qualified name ") + kQualifiedNameRule +
                    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return why;
    }
    std::string prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      why.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& m : Dns1123Subdomain(prefix)) why.push_back("prefix part " + m);
    }
  }
  if (name.empty()) {
    why.push_back("name part must be non-empty");
    return why;
  }
  if (name.size() > 63) why.push_back("name part " + MaxLength(63));
  if (!IsQualifiedNamePart(name)) why.push_back(std::string("name part ") + kQualifiedNameRule);
  return why;
}

std::vector<std::string> LabelValue(const std::string& value) {
  std::vector<std::string> why;
  if (value.size() > 63) why.push_back(MaxLength(63));
  if (!value.empty() && !IsQualifiedNamePart(value)) why.push_back(kLabelValueMessage);
  return why;
}

}  // namespace dljob::apiserver
