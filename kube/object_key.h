// Object identity helpers shared by every holder of Kubernetes objects (informer stores, the fake
// Api, the test API server): the "namespace/name" key and the resourceVersion of an object in its
// JSON form. Pure functions; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dljob::kube {

// "namespace/name", or "name" when the object has no namespace.
std::string ObjectKey(const nlohmann::json& object);
std::string ObjectKey(const std::string& ns, const std::string& name);
// The object's metadata.resourceVersion ("" when missing).
std::string ResourceVersionOf(const nlohmann::json& object);

}  // namespace dljob::kube
