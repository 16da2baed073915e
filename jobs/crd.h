// The DLJob and DLQueue CustomResourceDefinitions (apiextensions.k8s.io/v1), generated from the
// jobs/ types.
//
// The schema is generated from the field tables (dljob_fields.h, dlqueue_fields.h), the same rows
// the codec
// decodes and encodes with: each field's C++ type gives its schema type, and its row adds what a
// type cannot say (description, enum, minimum, required). A field added to the types and its
// table appears in the CRD by construction. The result is a structural schema: every node has a
// type; only metadata is left to the API server.
//
// charts/dljob/crds/ holds the rendered files; `dljob-gen-crd` regenerates them and a test fails
// when they drift apart. reference.h renders the same schemas as the Markdown pages of
// docs/reference/. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"
#include "jobs/dlqueue_types.h"

namespace dljob {

inline constexpr char kPlural[] = "dljobs";
inline constexpr char kShortName[] = "dlj";

inline constexpr char kQueuePlural[] = "dlqueues";
inline constexpr char kQueueShortName[] = "dlq";

// The whole CRD object, ready to be written as YAML or JSON.
nlohmann::ordered_json DLJobCrd();
// The DLQueue CRD: cluster-scoped, with a status subresource the operator writes.
nlohmann::ordered_json DLQueueCrd();

}  // namespace dljob
