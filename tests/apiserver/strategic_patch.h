// An approximation of Kubernetes' strategic merge patch, enough for `kubectl apply` and
// `kubectl patch` on built-in types: a JSON merge patch in which lists of objects that all carry
// a "name" (containers, volumes, env, …) merge element by element by name (an element with
// "$patch": "delete" removes its match), and the patch directives ($setElementOrder/…,
// $retainKeys, $deleteFromPrimitiveList/…) are ignored rather than stored. Lists merged by
// other keys (ports by containerPort, volumeMounts by mountPath) are replaced whole.
// Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

namespace dljob::apiserver {

nlohmann::json ApplyStrategicPatch(const nlohmann::json& target, const nlohmann::json& patch);

}  // namespace dljob::apiserver
