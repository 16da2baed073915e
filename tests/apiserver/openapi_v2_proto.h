// /openapi/v2 as kubectl asks for it: the Swagger 2.0 document (openapi.h) encoded as the
// protobuf message openapi.v2.Document of google/gnostic's OpenAPIv2.proto, which client-go's
// discovery client requests (Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf)
// and decodes with no JSON fallback. The real server serves the same document as JSON or
// protobuf by the Accept header, answers protobuf as
// application/com.github.proto-openapi.spec.v2.v1.0+protobuf (the "@" form does not parse as a
// media type in Go), and 406 Not Acceptable (empty body) when nothing it has is acceptable.
//
// The encoder covers what openapi.h generates and a structural schema may hold: the document's
// swagger, info, paths and definitions; path items (operations and parameters), operations
// (operationId, consumes, produces, schemes, body/query/path parameters, responses); schemas
// with every keyword of gnostic's Schema message (nested properties, items, additionalProperties,
// allOf; default, example and enum as YAML) and vendor extensions (x-…, as YAML, which is how
// kubectl reads x-kubernetes-group-version-kind). Keys the message has no field for are left
// out, as gnostic's own parser would refuse them.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dljob::apiserver {

inline constexpr char kOpenApiV2ProtobufType[] =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

// The Swagger 2.0 JSON document as an openapi.v2.Document message.
std::string EncodeOpenApiV2(const nlohmann::json& swagger);

// Which encoding an Accept header asks for, as the real server picks one: the first acceptable
// media range by quality (JSON for a missing header or */*).
enum class OpenApiV2Format { kJson, kProtobuf, kNotAcceptable };
OpenApiV2Format NegotiateOpenApiV2(std::string_view accept);

}  // namespace dljob::apiserver
