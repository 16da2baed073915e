// The fields every Kubernetes object carries, read from its JSON form: identity (name, namespace,
// uid, the "namespace/name" key, resourceVersion), labels, and a pod's node. The one set for every
// holder of Kubernetes objects — informer stores, the operator, the CLI's cluster backend, the
// fake Api and the test API server — so none writes its own.
//
// Reads never throw: a missing field, or one of another type, reads as "" (or an empty labels
// object), as base/json_fields.h's FieldOf/StringAt, on which these are built. Pure; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dljob::kube {

// metadata.name, metadata.namespace, metadata.uid, metadata.resourceVersion ("" when missing).
std::string NameOf(const nlohmann::json& object);
std::string NamespaceOf(const nlohmann::json& object);
std::string UidOf(const nlohmann::json& object);
std::string ResourceVersionOf(const nlohmann::json& object);

// "namespace/name", or "name" when the object has no namespace.
std::string ObjectKey(const nlohmann::json& object);
std::string ObjectKey(const std::string& ns, const std::string& name);

// metadata.labels (an empty object when missing), and one label's value ("" when missing).
const nlohmann::json& LabelsOf(const nlohmann::json& object);
std::string LabelOf(const nlohmann::json& object, const char* key);

// A pod's spec.nodeName: the node it is bound to ("" while unbound).
std::string NodeNameOf(const nlohmann::json& pod);

// The object without metadata.managedFields: an informer transform for caches whose readers never
// look at them (server-side apply's bookkeeping is often the largest part of a small object). A
// write of the object back without them keeps the server's: only a non-empty list replaces them.
nlohmann::json WithoutManagedFields(nlohmann::json object);

}  // namespace dljob::kube
