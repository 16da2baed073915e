// The subset of JSONPath that CRD additionalPrinterColumns use: a dotted path from the object's
// root with optional array steps — ".status.phase", ".spec.containers[0].image",
// ".status.conditions[?(@.type==\"Ready\")].status" (the first element whose field equals the
// quoted value). Pure; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dljob::apiserver {

// The selected value, or null when the path selects nothing or is outside the subset.
nlohmann::json SimpleJsonPath(const nlohmann::json& object, const std::string& path);

}  // namespace dljob::apiserver
