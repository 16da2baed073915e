// The errors the test API server answers, as kube::ApiError values and metav1.Status bodies.
//
// Messages and reasons follow the real API server's ("pods \"x\" not found", reason NotFound), so
// clients that branch on reason and code (kube::ApiError's predicates, kubectl) behave as they
// would against a cluster. Pure functions; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kube/api.h"

namespace dljob::apiserver {

using kube::ApiError;
template <typename T>
using ApiResult = kube::ApiResult<T>;

// `what` is the resource's key as messages name it: "pods", "dljobs.dljob.io".
ApiError NotFoundError(const std::string& what, const std::string& name);
ApiError AlreadyExistsError(const std::string& what, const std::string& name);
// 409 AlreadyExists for a create with generateName when every name the server drew was taken.
ApiError GenerateNameConflictError(const std::string& what, const std::string& name);
// 409 Conflict: "Operation cannot be fulfilled on <what> \"<name>\": <detail>".
ApiError ConflictError(const std::string& what, const std::string& name, const std::string& detail);
// The stale-resourceVersion conflict of an update.
ApiError StaleUpdateError(const std::string& what, const std::string& name);
ApiError GoneError(const std::string& message);  // 410 Expired
ApiError BadRequestError(const std::string& message);
// 422 Invalid: "<Kind> \"<name>\" is invalid: <field>: <detail>".
ApiError InvalidError(const std::string& kind, const std::string& name, const std::string& detail);
ApiError MethodNotAllowedError(const std::string& message);
ApiError InternalError(const std::string& message);
// Any other status, e.g. an injected fault: reason from the code (TooManyRequests, …).
ApiError ErrorForCode(int code, const std::string& message);

// The metav1.Status body for an error.
nlohmann::json StatusBody(const ApiError& error);
// A metav1.Status with status Success (what binding and some deletes answer).
nlohmann::json SuccessStatus(int code);

}  // namespace dljob::apiserver
