// See admission.h.
#include "tests/apiserver/admission.h"

#include <cstdio>

#include "kube/object_fields.h"
#include "tests/apiserver/crd_schema.h"
#include "tests/apiserver/field_errors.h"
#include "tests/apiserver/object_validation.h"
#include "tests/apiserver/webhook_config.h"

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

std::string FieldManagerOf(const QueryParams& query, const std::string& user_agent) {
  auto it = query.find("fieldManager");
  if (it != query.end() && !it->second.empty()) return it->second;
  std::string out;
  for (char c : user_agent.substr(0, user_agent.find('/'))) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;  // not printable
    if (out.size() >= 128) break;
    out += c;
  }
  return out;
}

std::optional<InvalidStatus> ValidateWriteOptions(const std::string& options_kind,
                                                  const QueryParams& query, bool apply) {
  auto param = [&](const char* key) -> const std::string* {
    auto it = query.find(key);
    return it == query.end() ? nullptr : &it->second;
  };
  const std::string* manager = param("fieldManager");
  FieldErrors errors;
  if (options_kind == "PatchOptions" && !apply && param("force")) {
    errors.push_back(Forbidden("force", "may not be specified for non-apply patch"));
  }
  if (apply && (!manager || manager->empty())) {
    errors.push_back(Required("fieldManager", "is required for apply patch"));
  }
  if (manager && manager->size() > 128) errors.push_back(TooLong("fieldManager", 128));
  if (manager) {
    for (size_t i = 0; i < manager->size(); ++i) {
      auto u = static_cast<unsigned char>((*manager)[i]);
      if (u < 0x20 || u == 0x7f) {
        char rune[16];
        std::snprintf(rune, sizeof rune, "U+%04X", u);
        errors.push_back(Invalid(
            "fieldManager", *manager,
            "invalid character " + std::string(rune) + " (at position " + std::to_string(i) + ")"));
      }
    }
  }
  if (errors.empty()) return std::nullopt;
  InvalidStatus invalid = MakeInvalid(options_kind, "meta.k8s.io", "", errors);
  invalid.details.erase("name");  // the real server's details leave an empty name out
  return invalid;
}

std::optional<ApiError> PruneUnknown(const ResourceType& type, FieldValidation mode, bool patch,
                                     nlohmann::json& object, AdmissionReport* report) {
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
  return std::nullopt;
}

std::optional<ApiError> Admit(const ResourceType& type, FieldValidation mode, bool patch,
                              const nlohmann::json* old, nlohmann::json& object,
                              AdmissionReport* report) {
  if (std::optional<ApiError> refused = PruneUnknown(type, mode, patch, object, report)) {
    return refused;
  }
  if (IsValidatingWebhookConfigurationType(type)) DefaultWebhookConfiguration(object);
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
