// See object_store.h. Deletion and garbage collection live in object_store_delete.cc, watch
// support in object_store_watch.cc.
#include "tests/apiserver/object_store.h"

#include <cstdio>
#include <utility>

#include "base/time_format.h"

namespace dljob::apiserver {
namespace {

// Everything that is neither metadata nor status: what bumps metadata.generation.
Json SpecPart(const Json& object) {
  Json out = object;
  out.erase("metadata");
  out.erase("status");
  return out;
}

std::string HexEncode(const std::string& s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::optional<std::string> HexDecode(const std::string& s) {
  if (s.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    int v = 0;
    if (std::sscanf(s.c_str() + i, "%2x", &v) != 1) return std::nullopt;
    out += static_cast<char>(v);
  }
  return out;
}

// A continue token: "<list version>-<hex of the last returned object's key>".
struct ContinueToken {
  uint64_t version = 0;
  std::string after;
};

std::optional<ContinueToken> ParseContinue(const std::string& token) {
  size_t dash = token.find('-');
  if (dash == std::string::npos || dash == 0) return std::nullopt;
  ContinueToken out;
  try {
    out.version = std::stoull(token.substr(0, dash));
  } catch (...) {
    return std::nullopt;
  }
  std::optional<std::string> after = HexDecode(token.substr(dash + 1));
  if (!after) return std::nullopt;
  out.after = *after;
  return out;
}

Json& Metadata(Json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) {
    object["metadata"] = Json::object();
  }
  return object["metadata"];
}

}  // namespace

ObjectStore::ObjectStore(StoreOptions options) : options_(std::move(options)) {}

std::string ObjectStore::ObjectKey(const ResourceType& type, const std::string& ns,
                                   const std::string& name) {
  return type.namespaced ? ns + "/" + name : name;
}

ObjectPtr ObjectStore::FindLocked(const ResourceType& type, const std::string& ns,
                                  const std::string& name) const {
  auto t = objects_.find(type.Key());
  if (t == objects_.end()) return nullptr;
  auto o = t->second.find(ObjectKey(type, ns, name));
  return o == t->second.end() ? nullptr : o->second;
}

std::string ObjectStore::NowText() const {
  return FormatRfc3339(options_.now ? options_.now() : std::chrono::system_clock::now());
}

std::string ObjectStore::NextUidLocked() {
  char buf[40];
  ++uids_;
  std::snprintf(buf, sizeof buf, "%08llx-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(uids_ >> 32),
                static_cast<unsigned long long>(uids_ & 0xffffffffffffULL));
  return buf;
}

namespace {
constexpr size_t kMaxGeneratedPrefix = 63 - 5;
constexpr int kGenerateNameAttempts = 8;
}  // namespace

std::string ObjectStore::NameSuffixLocked() {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as the real server's
  std::string out;
  for (int i = 0; i < 5; ++i) out += kAlphabet[names_() % (sizeof kAlphabet - 1)];
  return out;
}

void ObjectStore::RecordLocked(StoredEvent event) {
  history_.push_back(std::move(event));
  while (history_.size() > options_.history_limit) {
    compacted_ = history_.front().resource_version;
    history_.pop_front();
  }
  changed_.notify_all();
}

ApiResult<Json> ObjectStore::PrepareCreateLocked(const ResourceType& type, const std::string& ns,
                                                 Json object, const Admission& admit) {
  Json& meta = Metadata(object);
  if (type.namespaced) {
    std::string body_ns = meta.value("namespace", "");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequestError(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    if (ns.empty()) return BadRequestError("a namespace is required to create " + type.Key());
    if (options_.require_namespaces && objects_["namespaces"].count(ns) == 0) {
      return NotFoundError("namespaces", ns);
    }
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  std::string name = meta.value("name", "");
  if (name.empty()) {
    std::string prefix = meta.value("generateName", "");
    if (prefix.empty()) {
      return InvalidError(type.kind, "",
                          "metadata.name: Required value: name or generateName is required");
    }
    // As the real server: the prefix cut to leave room for the suffix in 63 characters
    // (apiserver's SimpleNameGenerator), and a name that is taken drawn again, up to 8 names in
    // all (Kubernetes 1.31's RetryGenerateName); the client does not retry such a create.
    if (prefix.size() > kMaxGeneratedPrefix) prefix.resize(kMaxGeneratedPrefix);
    for (int attempt = 1;; ++attempt) {
      name = prefix + NameSuffixLocked();
      if (!FindLocked(type, ns, name)) break;
      if (attempt == kGenerateNameAttempts) return GenerateNameConflictError(type.Key(), name);
    }
    meta["name"] = name;
  }
  if (FindLocked(type, ns, name)) return AlreadyExistsError(type.Key(), name);

  object["kind"] = type.kind;
  object["apiVersion"] = type.ApiVersion();
  meta["uid"] = NextUidLocked();
  meta["creationTimestamp"] = NowText();
  meta["generation"] = 1;
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  switch (type.create_status) {
    case CreateStatus::kKeep:
      break;
    case CreateStatus::kDrop:
      object.erase("status");
      break;
    case CreateStatus::kPodPending:
      object["status"] = {{"phase", "Pending"}};
      break;
    case CreateStatus::kNamespace:
      object["status"] = {{"phase", "Active"}};
      break;
  }
  if (admit) {
    if (std::optional<ApiError> refused = admit(nullptr, object)) return *refused;
  }
  return object;
}

Json ObjectStore::CommitCreateLocked(const ResourceType& type, Json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++version_);
  auto stored = std::make_shared<const Json>(std::move(object));
  const std::string object_key = ObjectKey(type, NamespaceOf(*stored), NameOf(*stored));
  objects_[type.Key()][object_key] = stored;
  uid_to_type_[UidOf(*stored)] = type.Key();
  IndexOwnersLocked(type.Key(), object_key, *stored, true);
  RecordLocked({version_, type.Key(), "ADDED", stored, nullptr});
  return *stored;
}

ApiResult<Json> ObjectStore::Create(const ResourceType& type, const std::string& ns, Json object,
                                    const Admission& admit, const Review& review) {
  if (!object.is_object()) return BadRequestError("the body of a create must be a JSON object");
  if (!review) {
    MutexLock lock(mu_);
    ApiResult<Json> prepared = PrepareCreateLocked(type, ns, std::move(object), admit);
    if (!prepared.ok()) return prepared;
    return CommitCreateLocked(type, std::move(prepared).value());
  }
  const bool generated = NameOf(object).empty();
  for (int attempt = 1;; ++attempt) {
    ApiResult<Json> prepared = BadRequestError("unreachable");
    {
      MutexLock lock(mu_);
      prepared = PrepareCreateLocked(type, ns, object, admit);
    }
    if (!prepared.ok()) return prepared;
    if (std::optional<ApiError> refused = review(nullptr, *prepared)) return *refused;
    MutexLock lock(mu_);
    // What may have changed while the webhooks looked: the name, the namespace.
    const std::string name = NameOf(*prepared);
    if (type.namespaced && options_.require_namespaces && objects_["namespaces"].count(ns) == 0) {
      return NotFoundError("namespaces", ns);
    }
    if (FindLocked(type, ns, name)) {
      if (generated && attempt < kGenerateNameAttempts) continue;  // draw another name
      return generated ? GenerateNameConflictError(type.Key(), name)
                       : AlreadyExistsError(type.Key(), name);
    }
    return CommitCreateLocked(type, std::move(prepared).value());
  }
}

ApiResult<Json> ObjectStore::Get(const ResourceType& type, const std::string& ns,
                                 const std::string& name) const {
  MutexLock lock(mu_);
  ObjectPtr found = FindLocked(type, ns, name);
  if (!found) return NotFoundError(type.Key(), name);
  return *found;
}

ObjectPtr ObjectStore::Find(const ResourceType& type, const std::string& ns,
                            const std::string& name) const {
  MutexLock lock(mu_);
  return FindLocked(type, ns, name);
}

ApiResult<Json> ObjectStore::List(const ResourceType& type, const std::string& ns,
                                  const ListQuery& query) const {
  ContinueToken token{0, ""};
  if (!query.continue_token.empty()) {
    std::optional<ContinueToken> parsed = ParseContinue(query.continue_token);
    if (!parsed) return BadRequestError("invalid continue token \"" + query.continue_token + "\"");
    token = *parsed;
  }
  MutexLock lock(mu_);
  Json items = Json::array();
  std::string last_key;
  int64_t remaining = 0;
  auto t = objects_.find(type.Key());
  if (t != objects_.end()) {
    auto it = token.after.empty() ? t->second.begin() : t->second.upper_bound(token.after);
    for (; it != t->second.end(); ++it) {
      const Json& obj = *it->second;
      if (!ns.empty() && type.namespaced && NamespaceOf(obj) != ns) continue;
      if (!query.labels.Matches(kube::LabelsOf(obj))) continue;
      if (!query.fields.Matches(obj)) continue;
      if (query.limit > 0 && static_cast<int64_t>(items.size()) >= query.limit) {
        ++remaining;
        continue;
      }
      items.push_back(obj);
      last_key = it->first;
    }
  }
  uint64_t version = token.version ? token.version : version_;
  Json meta = {{"resourceVersion", std::to_string(version)}};
  if (remaining > 0) {
    meta["continue"] = std::to_string(version) + "-" + HexEncode(last_key);
    meta["remainingItemCount"] = remaining;
  }
  return Json{{"kind", type.ListKind()},
              {"apiVersion", type.ApiVersion()},
              {"metadata", meta},
              {"items", std::move(items)}};
}

ApiResult<Json> ObjectStore::CommitLocked(const ResourceType& type, const ObjectPtr& old,
                                          Json updated) {
  Json& meta = Metadata(updated);
  const Json& old_meta = (*old)["metadata"];
  meta["resourceVersion"] = old_meta["resourceVersion"];
  meta["generation"] = old_meta.value("generation", 1);
  if (updated == *old) return *old;  // nothing changed: no new version, no event
  if (SpecPart(updated) != SpecPart(*old)) meta["generation"] = old_meta.value("generation", 1) + 1;
  meta["resourceVersion"] = std::to_string(++version_);
  auto stored = std::make_shared<const Json>(std::move(updated));
  std::string object_key = ObjectKey(type, NamespaceOf(*stored), NameOf(*stored));
  objects_[type.Key()][object_key] = stored;
  IndexOwnersLocked(type.Key(), object_key, *stored, true);
  RecordLocked({version_, type.Key(), "MODIFIED", stored, old});
  const Json& stored_meta = (*stored)["metadata"];
  bool finalizers = stored_meta.contains("finalizers") && stored_meta["finalizers"].is_array() &&
                    !stored_meta["finalizers"].empty();
  if (stored_meta.contains("deletionTimestamp") && !finalizers &&
      stored_meta.value("deletionGracePeriodSeconds", 0) == 0) {
    DeleteLocked(type.Key(), object_key, "Background");  // the last finalizer went
  }
  return *stored;
}

ApiResult<Json> ObjectStore::PrepareUpdateLocked(const ResourceType& type, const ObjectPtr& old,
                                                 Json object, Part part, const Admission& admit) {
  const Json& old_meta = (*old)["metadata"];
  Json updated;
  if (part == Part::kStatus) {
    updated = *old;
    if (object.contains("status")) {
      updated["status"] = object["status"];
    } else {
      updated.erase("status");
    }
  } else {
    updated = std::move(object);
    Json& meta = Metadata(updated);
    for (const char* kept : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                             "deletionGracePeriodSeconds"}) {
      if (old_meta.contains(kept)) {
        meta[kept] = old_meta[kept];
      } else {
        meta.erase(kept);
      }
    }
    if (old_meta.contains("deletionTimestamp") && meta.contains("finalizers") &&
        meta["finalizers"].is_array()) {
      Json added = Json::array();
      for (const Json& f : meta["finalizers"]) {
        bool had = false;
        for (const Json& g : old_meta.value("finalizers", Json::array())) had = had || g == f;
        if (!had) added.push_back(f);
      }
      if (!added.empty()) {
        std::string list;
        for (const Json& f : added) list += (list.empty() ? "" : ", ") + f.dump();
        return InvalidError(type.kind, NameOf(*old),
                            "metadata.finalizers: Forbidden: no new finalizers can be added if "
                            "the object is being deleted, found new finalizers []string{" +
                                list + "}");
      }
    }
    if (type.has_status) {
      if (old->contains("status")) {
        updated["status"] = (*old)["status"];
      } else {
        updated.erase("status");
      }
    }
  }
  updated["kind"] = type.kind;
  updated["apiVersion"] = type.ApiVersion();
  if (admit) {
    if (std::optional<ApiError> refused = admit(old.get(), updated)) return *refused;
  }
  Metadata(updated)["resourceVersion"] = old_meta["resourceVersion"];  // what a webhook sees
  return updated;
}

ApiResult<Json> ObjectStore::ReviewedUpdate(const ResourceType& type, const std::string& ns,
                                            const std::string& name, const Prepare& prepare,
                                            const Review& review) {
  // Unbounded on the real server; a write that loses this many races reports the last one.
  constexpr int kAttempts = 16;
  for (int attempt = 1;; ++attempt) {
    ObjectPtr old;
    ApiResult<Json> prepared = BadRequestError("unreachable");
    {
      MutexLock lock(mu_);
      old = FindLocked(type, ns, name);
      if (!old) return NotFoundError(type.Key(), name);
      prepared = prepare(old);
      if (!prepared.ok()) return prepared;
      if (!review) return CommitLocked(type, old, std::move(prepared).value());
    }
    if (std::optional<ApiError> refused = review(old.get(), *prepared)) return *refused;
    MutexLock lock(mu_);
    if (FindLocked(type, ns, name) == old)
      return CommitLocked(type, old, std::move(prepared).value());
    if (attempt == kAttempts) return StaleUpdateError(type.Key(), name);
  }
}

ApiResult<Json> ObjectStore::Update(const ResourceType& type, const std::string& ns,
                                    const std::string& name, Json object, Part part,
                                    const Admission& admit, const Review& review) {
  if (!object.is_object()) return BadRequestError("the body of an update must be a JSON object");
  std::string body_name = NameOf(object);
  if (!body_name.empty() && body_name != name) {
    return BadRequestError("the name of the object (" + body_name +
                           ") does not match the name on the URL (" + name + ")");
  }
  std::string rv = ResourceVersionOf(object);
  auto prepare = [&](const ObjectPtr& old) -> ApiResult<Json> {
    mu_.AssertHeld();
    if (rv.empty() && type.custom) {
      return InvalidError(type.kind, name,
                          "metadata.resourceVersion: Invalid value: 0x0: must be specified for an "
                          "update");
    }
    if (!rv.empty() && rv != ResourceVersionOf(*old)) return StaleUpdateError(type.Key(), name);
    return PrepareUpdateLocked(type, old, object, part, admit);
  };
  return ReviewedUpdate(type, ns, name, prepare, review);
}

ApiResult<Json> ObjectStore::MergePatch(const ResourceType& type, const std::string& ns,
                                        const std::string& name, const Json& patch, Part part,
                                        const Admission& admit, const Review& review) {
  if (!patch.is_object()) return BadRequestError("a merge patch must be a JSON object");
  auto prepare = [&](const ObjectPtr& old) -> ApiResult<Json> {
    mu_.AssertHeld();
    if (patch.contains("metadata") && patch["metadata"].is_object()) {
      std::string rv = patch["metadata"].value("resourceVersion", "");
      if (!rv.empty() && rv != ResourceVersionOf(*old)) return StaleUpdateError(type.Key(), name);
    }
    Json patched = *old;
    patched.merge_patch(patch);
    return PrepareUpdateLocked(type, old, std::move(patched), part, admit);
  };
  return ReviewedUpdate(type, ns, name, prepare, review);
}

ApiResult<Json> ObjectStore::Mutate(const ResourceType& type, const std::string& ns,
                                    const std::string& name, const Mutation& mutation) {
  MutexLock lock(mu_);
  ObjectPtr old = FindLocked(type, ns, name);
  if (!old) return NotFoundError(type.Key(), name);
  Json updated = *old;
  if (std::optional<ApiError> error = mutation(updated)) return *error;
  return CommitLocked(type, old, std::move(updated));
}

std::vector<Json> ObjectStore::Objects(const std::string& key, const std::string& ns) const {
  std::vector<Json> out;
  for (const ObjectPtr& obj : Snapshot(key, ns).first) out.push_back(*obj);
  return out;
}

}  // namespace dljob::apiserver
