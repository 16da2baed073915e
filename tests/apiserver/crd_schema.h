// A CustomResourceDefinition's structural schema (spec.versions[].schema.openAPIV3Schema) applied
// to a custom resource the way the real API server applies it: pruning, then validation.
//
// PruneUnknownFields drops every field the schema does not declare (unless a level says
// x-kubernetes-preserve-unknown-fields or has additionalProperties) and returns their paths
// ("spec.foo", "spec.data[0].bar"): the server refuses them under fieldValidation=Strict, warns
// under Warn, drops them silently under Ignore. At the root, apiVersion, kind and metadata are
// never pruned here (metadata has its own rules: object_meta.h).
//
// ValidateAgainstSchema checks what a structural schema may say: type (and nullable,
// x-kubernetes-int-or-string), required, enum, minimum/maximum (exclusive too), minLength/
// maxLength, pattern, minItems/maxItems/uniqueItems, minProperties/maxProperties, properties,
// additionalProperties and items. Not checked: format, x-kubernetes-validations (CEL),
// x-kubernetes-list-type/map-keys, defaults (not applied). Messages follow the real server's
// ("spec.gpus: Invalid value: -3: spec.gpus in body should be greater than or equal to 1").
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/field_errors.h"

namespace dljob::apiserver {

std::vector<std::string> PruneUnknownFields(const nlohmann::json& schema, nlohmann::json& object);

FieldErrors ValidateAgainstSchema(const nlohmann::json& schema, const nlohmann::json& object);

}  // namespace dljob::apiserver
