// Field management, as the real API server does it for server-side apply: who owns which field
// of an object (metadata.managedFields), how an applied configuration merges into the object,
// which fields an applier gives up, and when an apply conflicts with another manager. A pure
// core over JSON objects; the REST layer (rest_apply.cc) reads and writes the store around it.
//
// Managers. metadata.managedFields lists, per manager, the fields it owns (field_set.h), with
// operation Apply (server-side apply) or Update (create, update, merge/strategic/JSON patch), the
// apiVersion it wrote, the subresource ("status" or none) and the time it last changed something.
// An applier is one entry whatever apiVersion it used; an updater is one entry per apiVersion.
// Entries are sorted as the real server sorts them (operation, time, manager, apiVersion).
//
// Updates (UpdatedManagedFields): the fields a write added or changed now belong to its manager
// and no longer to anyone else; fields it removed belong to no one. Its entry's time moves only
// when it changed something.
//
// Apply (ApplyConfiguration), in the order structured-merge-diff follows:
//  1. merge: the configuration is merged into the object (field_types.h says which lists merge
//     by key and which are replaced whole);
//  2. the applier now owns exactly the fields of its configuration;
//  3. prune: a field the applier owned last time, left out of its configuration now and owned by
//     no other manager, is removed from the object (with what lies below it);
//  4. conflicts: a field another manager owns whose value this apply changes is a conflict
//     (409, "Apply failed with 1 conflict: conflict with \"alice\": .spec.gpus"), unless force,
//     which takes the field from that manager. Applying the value a field already has is no
//     conflict: the field is then shared.
//
// Moving from client-side apply, as the real server helps kubectl do it (only for the manager
// "kubectl", kubectl's server-side default): a conflict over a field whose live value is still
// the one the kubectl.kubernetes.io/last-applied-configuration annotation records is no conflict
// (the apply takes the field), and when the object has that annotation the apply rewrites it to
// the applied configuration.
//
// What no manager owns: apiVersion, kind, and metadata's name, namespace, uid, resourceVersion,
// generation, creationTimestamp, managedFields (stripped as the real server strips them). A write
// to the main resource of a kind with a status subresource owns nothing under .status; a write
// to /status owns only what is under .status (FieldScope).
//
// Limits (docs/development/test-apiserver.md): lists whose items cannot all be keyed (a missing
// key with no default, two items with one key) are handled whole, as atomic lists, where the real
// server refuses the request; no conversion between versions (one version per kind); no cap of
// ten Update managers.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/apiserver/api_errors.h"
#include "tests/apiserver/field_set.h"
#include "tests/apiserver/field_types.h"

namespace dljob::apiserver {

struct ManagerEntry {
  std::string manager;
  std::string operation;  // "Apply" or "Update"
  std::string api_version;
  std::string subresource;  // "" or "status"
  std::string time;         // RFC 3339; "" when not known
  FieldSet fields;

  // The real server's identity of an entry (everything but the fields and the time; an
  // applier's apiVersion left out).
  bool SameManager(const ManagerEntry& other) const;
  // As conflicts name a manager: "\"alice\"", "\"kubectl-edit\" using v1",
  // "\"kubelet\" with subresource \"status\" using v1".
  std::string Describe() const;
};
using ManagedFields = std::vector<ManagerEntry>;

// metadata.managedFields to entries; nullopt when malformed (not a list of entries with a
// manager, operation Apply or Update and a FieldsV1 tree).
std::optional<ManagedFields> DecodeManagedFields(const nlohmann::json& entries);
// Sorted as the real server sorts them; entries without fields are dropped.
nlohmann::json EncodeManagedFields(ManagedFields entries);

// The fields a manager owns when it writes `object` (structured-merge-diff's ToFieldSet):
// leaves, map keys, list items and atomic values; not struct fields that have fields below them.
FieldSet FieldSetOf(const nlohmann::json& object, const FieldType& root);

// What changed from `before` to `after` (either may be null: absent). metadata.managedFields is
// left out: no manager owns it.
struct Comparison {
  FieldSet added;
  FieldSet modified;
  FieldSet removed;
};
Comparison Compare(const nlohmann::json* before, const nlohmann::json* after,
                   const FieldType& root);

// `config` merged into `live`: objects merge field by field, lists merge by key or as sets
// where field_types.h says so (the configuration's order first), everything else is replaced.
nlohmann::json MergeObjects(const nlohmann::json& live, const nlohmann::json& config,
                            const FieldType& root);
// `object` without the fields, list items and map entries that are members of `remove`.
nlohmann::json RemoveFields(const nlohmann::json& object, const FieldSet& remove,
                            const FieldType& root);

enum class FieldScope { kAll, kAllButStatus, kOnlyStatus };

struct WriteContext {
  FieldType root;
  std::string manager;
  std::string api_version;  // the type's: "v1", "dljob.io/v1alpha1"
  std::string subresource;  // "" or "status"
  FieldScope scope = FieldScope::kAll;
  std::string now;  // RFC 3339
};

// A create (`old` null), update or non-apply patch by ctx.manager: the managedFields to store
// with `object`. The object's own managedFields, when valid and not empty, replace the stored
// ones first (a client may write them, as kubectl does when it hands client-side apply's fields
// to server-side apply); [{}] clears them; a /status write keeps the stored ones.
nlohmann::json UpdatedManagedFields(const WriteContext& ctx, const nlohmann::json* old,
                                    const nlohmann::json& object);

struct ApplyConflict {
  ManagerEntry manager;  // fields and time left empty
  FieldPath path;
};
struct ApplyResult {
  nlohmann::json object;  // with metadata.managedFields; null when there are conflicts
  std::vector<ApplyConflict> conflicts;
};
// Server-side apply of `config` by ctx.manager to `live` (the stored object, or for a create the
// skeleton {apiVersion, kind, metadata: {name, namespace}}). REQUIRES: both are objects and
// config has no metadata.managedFields.
ApplyResult ApplyConfiguration(const WriteContext& ctx, const nlohmann::json& live,
                               const nlohmann::json& config, bool force);

// Sets object.metadata.managedFields to `entries`, or leaves it out when there are none (as the
// real server does).
void SetManagedFields(nlohmann::json& object, nlohmann::json entries);

// The 409 Conflict the real server answers for apply conflicts and its Status details, whose
// causes name each field and manager (type FieldManagerConflict).
struct ApplyConflictStatus {
  ApiError error;
  nlohmann::json details;
};
ApplyConflictStatus MakeApplyConflict(const std::vector<ApplyConflict>& conflicts);

}  // namespace dljob::apiserver
