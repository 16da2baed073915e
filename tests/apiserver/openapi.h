// The OpenAPI v3 documents the test API server publishes (/openapi/v3 and
// /openapi/v3/{api/v1 | apis/<group>/<version>}), so that kubectl's default validation works.
//
// What kubectl (1.27 and later) reads from them: for each kind it sends, the PATCH operation
// tagged with x-kubernetes-group-version-kind and whether it takes the fieldValidation query
// parameter. Every operation here does, so kubectl skips its client-side schema check and sends
// fieldValidation=Strict, and the server's own checks (admission.h) answer. For `kubectl apply`
// it reads which patch media types a PATCH accepts (strategic merge for built-in kinds, JSON
// merge for custom resources), and for `kubectl explain` the component schemas.
//
// Component schemas: a custom resource's is its CRD's openAPIV3Schema with the kind's
// x-kubernetes-group-version-kind, as a real server publishes it. The built-in kinds' schemas are
// minimal (objects that preserve unknown fields) and carry no group-version-kind, so `kubectl
// apply` builds strategic merge patches from its compiled-in types (what it does against a server
// without OpenAPI). /openapi/v2 is not served (404), which kubectl tolerates.
//
// The index names each document with a hash of its content, so kubectl's cache sees a new CRD.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/resource_types.h"

namespace dljob::apiserver {

// /openapi/v3: {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=…"}, …}}.
nlohmann::json OpenApiV3Index(const std::vector<ResourceType>& types);

// /openapi/v3/<gv_path>, gv_path "api/v1" or "apis/dljob.io/v1alpha1"; nullopt when no type is
// served there.
std::optional<nlohmann::json> OpenApiV3Document(const std::vector<ResourceType>& types,
                                                const std::string& gv_path);

}  // namespace dljob::apiserver
