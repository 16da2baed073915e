// See admission.h.
#include "tests/apiserver/admission.h"

#include "kube/object_fields.h"
#include "tests/apiserver/crd_schema.h"
#include "tests/apiserver/field_errors.h"
#include "tests/apiserver/object_validation.h"

namespace dljob::apiserver {

ApiResult<FieldValidation> ParseFieldValidation(const QueryParams& query) {
  auto it = query.find("fieldValidation");
  std::string value = it == query.end() ? "" : it->second;
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return BadRequestError("fieldValidation: Unsupported value: " + GoQuote(value) +
                         ": supported values: \"Ignore\", \"Strict\", \"Warn\"");
}

std::optional<ApiError> Admit(const ResourceType& type, FieldValidation mode, bool patch,
                              const nlohmann::json* old, nlohmann::json& object,
                              AdmissionReport* report) {
  std::vector<std::string> unknown = PruneUnknownMetadata(object);
  if (type.custom && type.schema) {
    std::vector<std::string> more = PruneUnknownFields(*type.schema, object);
    unknown.insert(unknown.end(), more.begin(), more.end());
  }
  if (!unknown.empty() && mode == FieldValidation::kStrict) {
    std::string message = "strict decoding error: ";
    for (size_t i = 0; i < unknown.size(); ++i) {
      message += (i > 0 ? ", unknown field " : "unknown field ") + GoQuote(unknown[i]);
    }
    if (!patch) {
      message = type.kind + " in version " + GoQuote(type.version) + " cannot be handled as a " +
                type.kind + ": " + message;
    }
    return BadRequestError(message);
  }
  if (mode == FieldValidation::kWarn) {
    for (const std::string& field : unknown) {
      report->warnings.push_back("unknown field " + GoQuote(field));
    }
  }
  FieldErrors errors = ValidateObject(type, object, old);
  if (type.custom && type.schema) {
    FieldErrors schema_errors = ValidateAgainstSchema(*type.schema, object);
    errors.insert(errors.end(), schema_errors.begin(), schema_errors.end());
  }
  if (errors.empty()) return std::nullopt;
  const std::string name = kube::NameOf(object);
  InvalidStatus invalid = MakeInvalid(type.kind, type.group, name, errors);
  report->details = std::move(invalid.details);
  return invalid.error;
}

}  // namespace dljob::apiserver
