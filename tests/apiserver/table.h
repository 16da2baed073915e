// Server-side printing: objects as a meta.k8s.io/v1 Table, what `kubectl get` asks for with
// "Accept: application/json;as=Table;v=v1;g=meta.k8s.io".
//
// Columns follow the type's TableStyle: pods (NAME READY STATUS RESTARTS AGE, then IP and NODE at
// priority 1), nodes (NAME STATUS ROLES AGE VERSION), namespaces (NAME STATUS AGE), custom
// resources with additionalPrinterColumns (NAME, then those columns, evaluated by SimpleJsonPath),
// and NAME AGE otherwise. Each row carries the object as `include_object` says: "Object", "None",
// or (the default) "Metadata" as a PartialObjectMetadata.
// Pure functions; `now` is passed in. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tests/apiserver/resource_types.h"

namespace dljob::apiserver {

// Whether an Accept header asks for a Table.
bool WantsTable(const std::string& accept);

// A Table of `objects`; `resource_version` and `continue_token` go into its metadata.
// `with_columns` false leaves columnDefinitions empty (watch events after the first).
Json ObjectsToTable(const ResourceType& type, const std::vector<Json>& objects,
                    const std::string& resource_version, const std::string& continue_token,
                    const std::string& include_object, std::chrono::system_clock::time_point now,
                    bool with_columns = true);

}  // namespace dljob::apiserver
