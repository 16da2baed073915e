// The DLJob CustomResourceDefinition (apiextensions.k8s.io/v1), generated from the jobs/ types.
//
// The schema is derived, not written by hand: a DLJob with every field set (an exemplar) is
// encoded with the same encoder the CLI and operator use, and each value's JSON type becomes its
// schema type — so a field added to the types and the codec appears in the CRD by construction.
// What JSON types cannot say (enums, maps with free-form keys, descriptions, minimums) comes from
// a small annotation table keyed by field path. The result is a structural schema: every node has
// a type; only metadata is left to the API server.
//
// charts/dljob/crds/ holds the rendered file; `dljob-gen-crd` regenerates it and a test fails
// when the two drift apart. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "jobs/dljob_types.h"

namespace dljob {

inline constexpr char kPlural[] = "dljobs";
inline constexpr char kShortName[] = "dlj";

// A DLJob with every spec and status field set, each list and map holding one entry.
DLJob SchemaExemplar();

// The whole CRD object, ready to be written as YAML or JSON.
nlohmann::ordered_json DLJobCrd();

}  // namespace dljob
