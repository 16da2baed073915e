// See field_manager.h. The walks over objects are in field_walk.cc.
#include "tests/apiserver/field_manager.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "tests/apiserver/field_errors.h"

namespace dljob::apiserver {
namespace {

using Json = nlohmann::json;

// What no manager owns (the real server strips these from every manager's fields).
bool Stripped(const FieldPath& path) {
  static const std::set<std::string> kTop = {"f:apiVersion", "f:kind", "f:metadata"};
  static const std::set<std::string> kMeta = {
      "f:name",        "f:namespace",  "f:creationTimestamp", "f:selfLink",       "f:uid",
      "f:clusterName", "f:generation", "f:managedFields",     "f:resourceVersion"};
  if (path.size() == 1) return kTop.count(path[0]) > 0;
  return path.size() == 2 && path[0] == "f:metadata" && kMeta.count(path[1]) > 0;
}

bool InScope(const FieldPath& path, FieldScope scope) {
  bool status = !path.empty() && path[0] == "f:status";
  switch (scope) {
    case FieldScope::kAll:
      return true;
    case FieldScope::kAllButStatus:
      return !status;
    case FieldScope::kOnlyStatus:
      return status;
  }
  return true;
}

// The part of `fields` a write in this scope can own.
FieldSet Ownable(const FieldSet& fields, FieldScope scope) {
  return fields.Filter([scope](const FieldPath& p) { return !Stripped(p) && InScope(p, scope); });
}

Json WithoutManagedFields(const Json& object) {
  Json out = object;
  if (out.contains("metadata") && out["metadata"].is_object())
    out["metadata"].erase("managedFields");
  return out;
}

const Json* ManagedFieldsOf(const Json* object) {
  if (!object || !object->is_object() || !object->contains("metadata")) return nullptr;
  const Json& meta = (*object)["metadata"];
  if (!meta.is_object() || !meta.contains("managedFields")) return nullptr;
  return &meta["managedFields"];
}

ManagedFields Stored(const Json* object) {
  const Json* entries = ManagedFieldsOf(object);
  std::optional<ManagedFields> decoded =
      entries ? DecodeManagedFields(*entries) : std::optional<ManagedFields>();
  return decoded ? *decoded : ManagedFields();
}

// The entry of `who` in `managers`, added (with no fields) when missing.
ManagerEntry& EntryOf(ManagedFields& managers, const ManagerEntry& who) {
  for (ManagerEntry& e : managers) {
    if (e.SameManager(who)) return e;
  }
  managers.push_back(who);
  return managers.back();
}

auto IdentityKey(const ManagerEntry& e) {
  return std::tie(e.manager, e.operation, e.api_version, e.subresource);
}

constexpr char kKubectl[] = "kubectl";
constexpr char kLastApplied[] = "kubectl.kubernetes.io/last-applied-configuration";

std::string LastApplied(const Json& object) {
  const Json meta = object.value("metadata", Json::object());
  const Json annotations = meta.is_object() ? meta.value("annotations", Json::object()) : Json();
  if (!annotations.is_object()) return "";
  auto it = annotations.find(kLastApplied);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : "";
}

// The fields kubectl's server-side apply may take without a conflict from a client-side
// applier: those of the last-applied annotation whose live value is still the one it records.
FieldSet FromLastApplied(const WriteContext& ctx, const Json& live) {
  if (ctx.manager != kKubectl) return {};
  Json last = Json::parse(LastApplied(live), nullptr, /*allow_exceptions=*/false);
  if (!last.is_object()) return {};
  Comparison c = Compare(&last, &live, ctx.root);
  return FieldSetOf(last, ctx.root)
      .Difference(c.modified)
      .Difference(c.added)
      .Difference(c.removed);
}

// `object` without what its applier owned last time (`last`), left out now and no other
// manager owns (`managers` holds the applier's new fields).
Json Prune(Json object, const FieldSet& last, const ManagedFields& managers,
           const FieldType& root) {
  if (last.Empty()) return object;
  FieldSet owned;
  for (const ManagerEntry& m : managers) owned = owned.Union(m.fields);
  FieldSet gone = FieldSetOf(object, root)
                      .WithFieldPrefixes()
                      .Intersection(last.WithFieldPrefixes())
                      .Difference(owned.WithFieldPrefixes());
  return RemoveFields(object, gone, root);
}

// The last-applied annotation of `object` set to `config` (without that annotation), as the
// real server keeps it in step with kubectl's server-side applies.
void SetLastApplied(const Json& config, Json& object) {
  Json applied = config;
  if (applied.contains("metadata") && applied["metadata"].contains("annotations")) {
    applied["metadata"]["annotations"].erase(kLastApplied);
    if (applied["metadata"]["annotations"].empty()) applied["metadata"].erase("annotations");
  }
  object["metadata"]["annotations"][kLastApplied] = applied.dump() + "\n";
}

}  // namespace

bool ManagerEntry::SameManager(const ManagerEntry& other) const {
  return manager == other.manager && operation == other.operation &&
         subresource == other.subresource &&
         (operation == "Apply" || api_version == other.api_version);
}

std::string ManagerEntry::Describe() const {
  std::string out = GoQuote(manager);
  if (!subresource.empty()) out += " with subresource " + GoQuote(subresource);
  if (operation == "Update") out += " using " + api_version;
  return out;
}

std::optional<ManagedFields> DecodeManagedFields(const Json& entries) {
  if (!entries.is_array()) return std::nullopt;
  ManagedFields out;
  for (const Json& e : entries) {
    if (!e.is_object()) return std::nullopt;
    ManagerEntry entry;
    entry.manager = e.value("manager", "");
    entry.operation = e.value("operation", "");
    entry.api_version = e.value("apiVersion", "");
    entry.subresource = e.value("subresource", "");
    entry.time = e.value("time", "");
    if (entry.operation != "Apply" && entry.operation != "Update") return std::nullopt;
    if (e.contains("fieldsV1")) {
      if (e.value("fieldsType", "") != "FieldsV1") return std::nullopt;
      std::optional<FieldSet> fields = FieldSet::FromFieldsV1(e["fieldsV1"]);
      if (!fields) return std::nullopt;
      entry.fields = std::move(*fields);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Json EncodeManagedFields(ManagedFields entries) {
  std::erase_if(entries, [](const ManagerEntry& e) { return e.fields.Empty(); });
  std::stable_sort(entries.begin(), entries.end(),
                   [](const ManagerEntry& a, const ManagerEntry& b) {
                     return std::tie(a.operation, a.time, a.manager, a.api_version, a.subresource) <
                            std::tie(b.operation, b.time, b.manager, b.api_version, b.subresource);
                   });
  Json out = Json::array();
  for (const ManagerEntry& e : entries) {
    Json entry = {{"manager", e.manager},
                  {"operation", e.operation},
                  {"apiVersion", e.api_version},
                  {"fieldsType", "FieldsV1"},
                  {"fieldsV1", e.fields.ToFieldsV1()}};
    if (!e.time.empty()) entry["time"] = e.time;
    if (!e.subresource.empty()) entry["subresource"] = e.subresource;
    out.push_back(std::move(entry));
  }
  return out;
}

Json UpdatedManagedFields(const WriteContext& ctx, const Json* old, const Json& object) {
  ManagedFields managers = Stored(old);
  if (ctx.subresource.empty()) {
    const Json* sent = ManagedFieldsOf(&object);
    if (sent && *sent == Json::array({Json::object()})) {
      managers.clear();  // [{}]: the client resets them
    } else if (sent) {
      std::optional<ManagedFields> decoded = DecodeManagedFields(*sent);
      if (decoded && !decoded->empty()) managers = std::move(*decoded);
    }
  }
  static const Json kNothing = Json::object();
  Comparison c = Compare(old ? old : &kNothing, &object, ctx.root);
  FieldSet changed = Ownable(c.added.Union(c.modified), ctx.scope);
  FieldSet removed = Ownable(c.removed, ctx.scope);
  for (ManagerEntry& m : managers) m.fields = m.fields.Difference(changed).Difference(removed);
  if (!changed.Empty()) {
    ManagerEntry& mine =
        EntryOf(managers, {ctx.manager, "Update", ctx.api_version, ctx.subresource, "", {}});
    mine.fields = mine.fields.Union(changed);
    mine.time = ctx.now;
  }
  return EncodeManagedFields(std::move(managers));
}

ApplyResult ApplyConfiguration(const WriteContext& ctx, const Json& live, const Json& config,
                               bool force) {
  ManagedFields managers = Stored(&live);
  const Json current = WithoutManagedFields(live);
  Json merged = MergeObjects(current, config, ctx.root);

  const ManagerEntry me{ctx.manager, "Apply", ctx.api_version, ctx.subresource, "", {}};
  bool is_new = std::none_of(managers.begin(), managers.end(),
                             [&](const ManagerEntry& e) { return e.SameManager(me); });
  ManagerEntry& mine = EntryOf(managers, me);
  FieldSet last = mine.fields;
  mine.fields = Ownable(FieldSetOf(config, ctx.root), ctx.scope);
  mine.api_version = ctx.api_version;

  merged = Prune(std::move(merged), last, managers, ctx.root);

  Comparison c = Compare(&current, &merged, ctx.root);
  FieldSet changed = Ownable(c.added.Union(c.modified), ctx.scope);
  FieldSet removed = Ownable(c.removed, ctx.scope);
  ApplyResult result;
  for (ManagerEntry& m : managers) {
    if (m.SameManager(me)) continue;
    FieldSet taken = m.fields.Intersection(changed);
    for (const FieldPath& p : taken.members()) {
      ManagerEntry who = m;
      who.fields = {};
      who.time.clear();
      result.conflicts.push_back({std::move(who), p});
    }
    m.fields = m.fields.Difference(taken).Difference(removed);
  }
  if (!result.conflicts.empty() && !force) {
    std::erase_if(result.conflicts, [allowed = FromLastApplied(ctx, live)](const ApplyConflict& c) {
      return allowed.Has(c.path);
    });
    if (!result.conflicts.empty()) return result;
    return ApplyConfiguration(ctx, live, config, /*force=*/true);
  }
  result.conflicts.clear();
  // The time moves when this apply changed the object (or is the manager's first).
  for (ManagerEntry& m : managers) {
    if (m.SameManager(me) && (is_new || merged != current)) m.time = ctx.now;
  }
  SetManagedFields(merged, EncodeManagedFields(std::move(managers)));
  if (ctx.manager == kKubectl && !LastApplied(live).empty()) SetLastApplied(config, merged);
  result.object = std::move(merged);
  return result;
}

void SetManagedFields(Json& object, Json entries) {
  if (!object["metadata"].is_object()) object["metadata"] = Json::object();
  if (entries.is_array() && !entries.empty()) {
    object["metadata"]["managedFields"] = std::move(entries);
  } else {
    object["metadata"].erase("managedFields");
  }
}

ApplyConflictStatus MakeApplyConflict(const std::vector<ApplyConflict>& conflicts) {
  std::vector<ApplyConflict> sorted = conflicts;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ApplyConflict& a, const ApplyConflict& b) {
                     if (IdentityKey(a.manager) != IdentityKey(b.manager)) {
                       return IdentityKey(a.manager) < IdentityKey(b.manager);
                     }
                     return a.path < b.path;
                   });
  Json causes = Json::array();
  for (const ApplyConflict& c : sorted) {
    causes.push_back({{"type", "FieldManagerConflict"},
                      {"message", "conflict with " + c.manager.Describe()},
                      {"field", PathString(c.path)}});
  }
  std::string message;
  if (sorted.size() == 1) {
    message = "Apply failed with 1 conflict: conflict with " + sorted[0].manager.Describe() + ": " +
              PathString(sorted[0].path);
  } else {
    std::string lines;
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i == 0 || IdentityKey(sorted[i].manager) != IdentityKey(sorted[i - 1].manager)) {
        lines += (lines.empty() ? "" : "\n") + std::string("conflicts with ") +
                 sorted[i].manager.Describe() + ":";
      }
      lines += "\n- " + PathString(sorted[i].path);
    }
    message = "Apply failed with " + std::to_string(sorted.size()) + " conflicts: " + lines;
  }
  return {ErrorForCode(409, message), Json{{"causes", causes}}};
}

}  // namespace dljob::apiserver
