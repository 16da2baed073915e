// Checks chart values against the chart's values.schema.json, as `helm install` does before it
// renders anything, and words each failure as Helm 3 does:
//
//   values don't meet the specifications of the schema(s) in the following chart(s):
//   dljob:
//   - at '/replicas': got string, want integer
//   - at '/podDisruptionBudget': additional properties 'minAvailabel' not allowed
//
// Implements the part of JSON Schema (draft-07, Helm's dialect) the chart's schema uses:
// `type` (one name or a list; "integer" is a number with no fraction), `properties`,
// `additionalProperties` (false or a schema), `required`, `enum`, `minimum`, `maximum`,
// `minLength`, `items` (one schema), `pattern` (ECMAScript), and the annotations `$schema`,
// `title`, `description`, `default`, `examples`. Any other keyword is an error naming its place
// in the schema, so a schema edit that needs more fails the chart's test instead of being
// ignored. Values nested deeper than kMaxDepth are refused rather than walked. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace dljob::chart {

inline constexpr int kMaxSchemaDepth = 64;

// One failure: where in the values (a JSON pointer, "" for the root) and what.
struct SchemaViolation {
  std::string at;       // "/replicas"
  std::string message;  // "got string, want integer"
};

// Every violation of `schema` by `values`, in document order; kInvalidArgument when the schema
// itself uses a keyword this checker does not implement or is malformed.
Result<std::vector<SchemaViolation>> CheckAgainstSchema(const nlohmann::json& schema,
                                                        const nlohmann::json& values);

// Ok, or kInvalidArgument with Helm's message listing every violation under `chart_name`.
Status ValidateValues(const nlohmann::json& schema, const nlohmann::json& values,
                      const std::string& chart_name);

}  // namespace dljob::chart
