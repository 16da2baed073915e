// Field errors: what the real API server's validation reports about one field of an object, and
// the 422 Invalid Status it answers with them.
//
// The shapes follow apimachinery's field.Error and errors.NewInvalid, because clients read them:
// kubectl prints the Status message ("Service \"1abc-worker\" is invalid: metadata.name: Invalid
// value: \"1abc-worker\": a DNS-1035 label must ..."), and controllers read details.causes
// (type FieldValueInvalid, field metadata.name). One error gives "<field>: <body>"; several give
// "[<e1>, <e2>]".
//
// The name rules (DNS-1123 label and subdomain, DNS-1035 label, label keys and values) are the
// real server's, with its messages, so a name the test server accepts is one a cluster accepts.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/name_rules.h"
#include "tests/apiserver/api_errors.h"

namespace dljob::apiserver {

struct FieldError {
  enum class Type {
    kRequired,
    kInvalid,
    kNotSupported,
    kNotFound,
    kTooLong,
    kDuplicate,
    kForbidden,
    kTooMany
  };
  Type type = Type::kInvalid;
  std::string field;  // "metadata.name", "spec.containers[0].image"
  // The offending value as the real server prints it (Go's %v: strings quoted); "" for none.
  std::string value;
  std::string detail;

  // "FieldValueInvalid", … (metav1.StatusCause.type).
  std::string CauseType() const;
  // "Invalid value: \"x\": detail" (what a cause's message says).
  std::string Body() const;
  // "<field>: <Body()>".
  std::string ToString() const;
};
using FieldErrors = std::vector<FieldError>;

// A JSON value printed the way Go's %v prints what the real server holds: strings quoted with
// Go's %q escapes, integers without a fraction, objects and arrays as JSON.
std::string GoValue(const nlohmann::json& value);
std::string GoQuote(const std::string& text);

FieldError Required(std::string field, std::string detail = "");
FieldError Invalid(std::string field, const nlohmann::json& value, std::string detail);
FieldError NotSupported(std::string field, const nlohmann::json& value,
                        const std::vector<std::string>& supported);
FieldError TooLong(std::string field, size_t max_bytes);
FieldError Duplicate(std::string field, const nlohmann::json& value);
FieldError NotFound(std::string field, const nlohmann::json& value);
FieldError Forbidden(std::string field, std::string detail);

// 422 Invalid for `errors` (REQUIRES: not empty): the ApiError (message as above) and the
// Status details {name, group, kind, causes}. `group` is "" for core kinds.
struct InvalidStatus {
  ApiError error;
  nlohmann::json details;
};
InvalidStatus MakeInvalid(const std::string& kind, const std::string& group,
                          const std::string& name, const FieldErrors& errors);

// The name rules (kube/name_rules.h), as the server's validation here uses them.
using kube::Dns1035Label;
using kube::Dns1123Label;
using kube::Dns1123Subdomain;
using kube::LabelValue;
using kube::QualifiedName;

}  // namespace dljob::apiserver
