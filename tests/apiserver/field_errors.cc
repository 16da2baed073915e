// See field_errors.h.
#include "tests/apiserver/field_errors.h"

#include <cstdio>

namespace dljob::apiserver {

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

}  // namespace dljob::apiserver
