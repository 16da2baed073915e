// Admission of a client's write: what the real API server does to an object between decoding the
// request and storing it, as one pure step the store calls under its lock (ObjectStore::Admission).
//
//  1. Unknown fields: ObjectMeta's (every type) and, for custom resources, every field the CRD's
//     structural schema does not declare, are pruned. The request's fieldValidation decides what
//     the client hears: Strict refuses the write (400 "strict decoding error: unknown field
//     \"spec.foo\""), Warn (the default, as on a real server since 1.27) answers with a Warning
//     header per field, Ignore says nothing.
//  2. Validation: object_validation.h for every type (a ValidatingWebhookConfiguration defaulted
//     first, webhook_config.h), then the CRD schema (crd_schema.h) for custom resources; errors
//     are a 422 Invalid with details.causes naming each field.
//
// Validating admission webhooks come after this step, outside the store's lock
// (ObjectStore::Review, webhook_dispatcher.h). Not modelled: defaulting from the schema, CEL
// rules, mutating webhooks, admission plugins (docs/development/test-apiserver.md).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/api_errors.h"
#include "tests/apiserver/field_errors.h"
#include "tests/apiserver/resource_types.h"
#include "tests/apiserver/rest_path.h"

namespace dljob::apiserver {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The fieldValidation query parameter ("" is Warn); anything else is a 400.
ApiResult<FieldValidation> ParseFieldValidation(const QueryParams& query);

// The field manager of a write: the fieldManager parameter, else what the real server derives
// from the User-Agent: its text before the first "/", printable characters only, at most 128
// bytes ("kubectl/v1.32.4 (linux/amd64)" is "kubectl").
std::string FieldManagerOf(const QueryParams& query, const std::string& user_agent);

// The write options the real server checks before anything else (Create-, Update- or
// PatchOptions, by `options_kind`): fieldManager at most 128 bytes of printable characters and
// required for an apply; force only for an apply. A 422 Invalid of kind <options_kind> in
// group meta.k8s.io otherwise ("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager:
// Required value: is required for apply patch").
std::optional<InvalidStatus> ValidateWriteOptions(const std::string& options_kind,
                                                  const QueryParams& query, bool apply);

struct AdmissionReport {
  std::vector<std::string> warnings;  // Warning header texts
  nlohmann::json details;             // Status details of a 422 (null otherwise)
};

// Step 1 alone: prunes `object`'s unknown fields and reports them as `mode` says (under Strict,
// the error). Admit begins with it; server-side apply runs it on the applied configuration, so
// that the applier does not come to own fields the server drops.
std::optional<ApiError> PruneUnknown(const ResourceType& type, FieldValidation mode, bool patch,
                                     nlohmann::json& object, AdmissionReport* report);

// Prunes and validates `object` (the whole object about to be stored; `old` is the stored one
// for an update, null for a create). `patch` says the write came from a PATCH (the strict
// decoding message differs). Returns the error that refuses the write, if any.
std::optional<ApiError> Admit(const ResourceType& type, FieldValidation mode, bool patch,
                              const nlohmann::json* old, nlohmann::json& object,
                              AdmissionReport* report);

}  // namespace dljob::apiserver
