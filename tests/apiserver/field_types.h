// The shape of an object as field management (field_manager.h) reads it: which keys of an object
// are struct fields and which are map keys, and whether a list is one value (atomic), a set, or
// a list of items merged by key. The real server reads this from its OpenAPI schemas; here it
// comes from an OpenAPI v3 structural schema too: a custom resource's is its CRD's
// openAPIV3Schema, a built-in kind's a small table in field_types.cc that declares only what
// changes the outcome (the built-in kinds' published schemas stay minimal: openapi.h):
//
//   merged by key  Pod containers, initContainers, ephemeralContainers, volumes and
//                  imagePullSecrets by name; a container's env by name, ports by
//                  containerPort+protocol (protocol defaults to TCP), volumeMounts by mountPath;
//                  Service ports by port+protocol; Node and Pod status conditions by type;
//                  metadata.ownerReferences by uid
//   sets           metadata.finalizers
//   maps           labels, annotations, ConfigMap data/binaryData, Secret data/stringData,
//                  nodeSelector, resource limits/requests, Node capacity/allocatable; Service
//                  spec.selector is an atomic map
//
// Where a schema says nothing, a built-in kind's objects are structs and its lists atomic; a
// custom resource's unknown parts (x-kubernetes-preserve-unknown-fields) are "deduced" as the
// real server deduces them: objects are maps, lists atomic. A list without x-kubernetes-list-type
// is atomic, as in CRDs. metadata always has ObjectMeta's shape. Not modelled: unions,
// x-kubernetes-map-type: granular on schemas without properties, lists keyed by index.
//
// A FieldType is a cheap value that shares (and keeps alive) the schema it reads; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/resource_types.h"

namespace dljob::apiserver {

class FieldType {
 public:
  enum class ListKind { kAtomic, kSet, kMap };

  // The root of the objects of `type`.
  static FieldType RootOf(const ResourceType& type);
  // The root of objects with this structural schema (null: none); `builtin` picks the fallback
  // for what it does not say (structs, or deduced maps).
  static FieldType Root(std::shared_ptr<const nlohmann::json> schema, bool builtin);

  // An object written and owned whole (x-kubernetes-map-type: atomic).
  bool AtomicMap() const;
  // Whether `key` of an object here is a struct field (not a map key): struct fields are not
  // members of a field set unless they are leaves.
  bool Declares(const std::string& key) const;
  FieldType Field(const std::string& key) const;

  ListKind List() const;
  const std::vector<std::string>& Keys() const { return keys_; }  // for ListKind::kMap
  FieldType Item() const;
  // The schema default of an item's key field (a port's protocol: "TCP"), or null.
  nlohmann::json KeyDefault(const std::string& key) const;

 private:
  FieldType(std::shared_ptr<const nlohmann::json> keep, const nlohmann::json* schema, bool builtin,
            bool root);
  const nlohmann::json* Child(const char* keyword) const;

  std::shared_ptr<const nlohmann::json> keep_;  // owns the document `schema_` points into
  const nlohmann::json* schema_ = nullptr;      // null: nothing known here
  bool builtin_ = false;
  bool root_ = false;
  std::vector<std::string> keys_;
};

}  // namespace dljob::apiserver
