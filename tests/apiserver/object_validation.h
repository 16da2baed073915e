// What the real API server checks on every write of an object before it stores it: ObjectMeta
// (unknown fields, the name rule of the type, labels, annotations, ownerReferences) and, for the
// built-in kinds dljob writes, the parts of their validation a controller can get wrong: pod
// containers, names, hostname/subdomain, env names, volumes and restartPolicy, pod updates that
// change the spec, Service ports, ConfigMap and Secret keys.
//
// Name rules, as the real server's: Namespaces and Services are DNS labels (a Service a DNS-1035
// label: it may not start with a digit), everything else (Pods, ConfigMaps, Secrets, Events,
// Nodes, Leases, custom resources) a DNS-1123 subdomain.
//
// Not modelled: the many other rules of the built-in kinds (resource quantities, probes,
// security contexts, affinity, …) and the built-in kinds' unknown fields outside metadata (the
// test server keeps them; a real server drops or refuses them). docs/development/test-apiserver.md
// lists what is and is not checked.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/field_errors.h"
#include "tests/apiserver/resource_types.h"

namespace dljob::apiserver {

// Drops the fields of .metadata that ObjectMeta does not have; returns their paths
// ("metadata.foo").
std::vector<std::string> PruneUnknownMetadata(nlohmann::json& object);

// The errors of `object` as the type's create (`old` null) or update validation finds them.
FieldErrors ValidateObject(const ResourceType& type, const nlohmann::json& object,
                           const nlohmann::json* old);

// The reasons `name` is not a valid name for objects of `type` (empty: valid).
std::vector<std::string> NameRuleViolations(const ResourceType& type, const std::string& name);

}  // namespace dljob::apiserver
