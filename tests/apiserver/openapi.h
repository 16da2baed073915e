// The OpenAPI documents the test API server publishes, so that kubectl (1.27 to 1.33) can
// validate, apply (client- and server-side) and explain with its defaults:
//
//   /openapi/v3 and /openapi/v3/{api/v1 | apis/<group>/<version>}  OpenAPI 3.0, JSON
//   /openapi/v2                                                    Swagger 2.0, JSON or protobuf
//
// Both are built from one model of the paths and one schema builder, rendered twice:
//
// Paths. Every operation of every served type (list, create, read, replace, patch, delete,
// status) with x-kubernetes-group-version-kind, x-kubernetes-action, the query parameters of
// writes (dryRun, fieldManager, fieldValidation; force on PATCH) and the media types a PATCH
// accepts: JSON patch, merge patch and apply-patch+yaml, plus strategic merge patch for built-in
// kinds (in v3 as requestBody content, in v2 as the operation's consumes). What kubectl reads:
//  - fieldValidation on the kind's PATCH (v3, 1.27+; v2 before): kubectl then skips its
//    client-side schema check, sends fieldValidation=Strict, and the server answers
//    (admission.h);
//  - the PATCH's media types: `kubectl apply` sends a strategic merge patch only where they list
//    one (v3's requestBody, or v2's consumes in the versions that read v2 for it), a JSON merge
//    patch for custom resources.
//
// Schemas. A custom resource's is its CRD's openAPIV3Schema with metadata as a reference to
// ObjectMeta and x-kubernetes-group-version-kind, as a real server publishes it; in v2 it is first
// converted as the real server converts it (OpenApiV2Schema). The built-in kinds' schemas are
// minimal (objects that keep any field) and carry no group-version-kind, so kubectl builds their
// strategic merge patches from its compiled-in types, as against a server without OpenAPI (a
// schema with a group-version-kind but no fields would make kubectl build them from it, wrongly).
//
// /openapi/v2 matters to kubectl 1.27: its default validation downloads it (as protobuf) before
// any apply, and fails the command when it cannot (later versions download it only when they
// need it). The v3 index names each document with a hash of its content, so kubectl's cache sees
// a new CRD.
//
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

// /openapi/v2 as JSON (openapi_v2_proto.h encodes it for kubectl).
nlohmann::json OpenApiV2Document(const std::vector<ResourceType>& types);

// A structural schema (a CRD's openAPIV3Schema) as the real server publishes it in OpenAPI v2:
// allOf/anyOf/oneOf/not dropped; a nullable node untyped, without items or properties;
// x-kubernetes-preserve-unknown-fields nodes without items or properties; an array without items
// untyped; a nullable property not required.
nlohmann::json OpenApiV2Schema(const nlohmann::json& schema);

}  // namespace dljob::apiserver
