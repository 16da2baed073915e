// RestHandler: server-side apply, a PATCH with Content-Type application/apply-patch+yaml (a YAML
// or JSON body) and a fieldManager. See rest_handler.h; the merge, ownership and conflicts are
// field_manager.h's.
//
// As on the real server: the object is created when it does not exist (201); the configuration
// must name the type's apiVersion and kind and may not carry managedFields (400); a
// metadata.resourceVersion in it is a precondition (409 when stale); unknown fields of a custom
// resource are pruned from the configuration under the request's fieldValidation before the
// applier comes to own them; conflicts are a 409 whose causes name each field and manager, and
// force=true takes the fields. Not modelled: dryRun (the server ignores it for every verb).
#include "base/time_format.h"
#include "jobs/codec.h"
#include "tests/apiserver/admission.h"
#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/rest_response.h"

namespace dljob::apiserver {
namespace {

// The applied configuration: one YAML (or JSON) object.
ApiResult<Json> ParseConfiguration(const std::string& body) {
  Result<Json> parsed = YamlToJson(body);
  if (!parsed.ok()) return BadRequestError("error decoding YAML: " + parsed.status().message());
  if (!parsed->is_object()) {
    return BadRequestError("error decoding YAML: the applied configuration is not an object");
  }
  return std::move(parsed).value();
}

std::string StringAt(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// What the real server refuses in a configuration before it applies anything.
std::optional<ApiError> CheckConfiguration(const Json& config, const ResourceType& type,
                                           const RestPath& path) {
  std::string version = StringAt(config, "apiVersion");
  if (version != type.ApiVersion()) {
    return BadRequestError("Incorrect version specified in apply patch. Specified patch version: " +
                           version + ", expected: " + type.ApiVersion());
  }
  std::string kind = StringAt(config, "kind");
  if (kind != type.kind) {
    return BadRequestError("Incorrect kind specified in apply patch. Specified patch kind: " +
                           kind + ", expected: " + type.kind);
  }
  const Json meta = config.value("metadata", Json::object());
  if (!meta.is_object()) return BadRequestError("metadata must be an object");
  if (meta.contains("managedFields") && !meta["managedFields"].is_null()) {
    return BadRequestError("metadata.managedFields must be nil");
  }
  std::string name = StringAt(meta, "name");
  if (!name.empty() && name != path.name) {
    return BadRequestError("the name of the object (" + name +
                           ") does not match the name on the URL (" + path.name + ")");
  }
  std::string ns = StringAt(meta, "namespace");
  if (type.namespaced && !ns.empty() && ns != path.ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  return std::nullopt;
}

// What an apply that creates the object merges into.
Json Skeleton(const ResourceType& type, const RestPath& path) {
  Json meta = {{"name", path.name}};
  if (type.namespaced) meta["namespace"] = path.ns;
  return {{"apiVersion", type.ApiVersion()}, {"kind", type.kind}, {"metadata", meta}};
}

}  // namespace

ApiResult<Json> RestHandler::StoreApplied(const ResourceType& type, const RestPath& path,
                                          FieldValidation mode, const Json* current, Json object,
                                          AdmissionReport* report,
                                          const ObjectStore::Review& review) {
  // The store keeps what a write may change (a /status write only .status); the managed fields
  // the apply computed go in whole.
  const Json managed = object["metadata"].value("managedFields", Json::array());
  ObjectStore::Admission admit =
      AdmitWith(type, mode, true, report, [managed](const Json*, const Json&) { return managed; });
  if (!current) return store_.Create(type, path.ns, std::move(object), admit, review);
  object["metadata"]["resourceVersion"] = ResourceVersionOf(*current);
  ObjectStore::Part part =
      path.subresource == "status" ? ObjectStore::Part::kStatus : ObjectStore::Part::kMain;
  return store_.Update(type, path.ns, path.name, std::move(object), part, admit, review);
}

void RestHandler::ServeApply(const HttpRequest& request, const RestPath& path,
                             const ResourceType& type, FieldValidation mode,
                             const QueryParams& query, ResponseWriter& out) {
  ApiResult<Json> parsed = ParseConfiguration(request.body);
  if (!parsed.ok()) return RespondError(out, parsed.error());
  Json config = std::move(parsed).value();
  if (std::optional<ApiError> refused = CheckConfiguration(config, type, path)) {
    return RespondError(out, *refused);
  }
  AdmissionReport pruned;
  if (std::optional<ApiError> refused = PruneUnknown(type, mode, true, config, &pruned)) {
    return RespondError(out, *refused);
  }
  if (config.contains("metadata")) config["metadata"].erase("managedFields");
  const std::string precondition = ResourceVersionOf(config);
  const WriteContext ctx = FieldsContext(type, path, query.at("fieldManager"));
  const bool force = QueryFlag(query, "force");

  ApiResult<Json> result = BadRequestError("unreachable");
  AdmissionReport report;
  bool created = false;
  // Read, apply, write back at the version read; again when someone wrote in between.
  for (int attempt = 0; attempt < 5; ++attempt) {
    ApiResult<Json> current = store_.Get(type, path.ns, path.name);
    if (!current.ok() && (!current.error().IsNotFound() || !path.subresource.empty())) {
      return RespondError(out, current.error());
    }
    created = !current.ok();
    if (!created && !precondition.empty() && precondition != ResourceVersionOf(*current)) {
      return RespondError(out, StaleUpdateError(type.Key(), path.name));
    }
    ApplyResult applied =
        ApplyConfiguration(ctx, created ? Skeleton(type, path) : *current, config, force);
    if (!applied.conflicts.empty()) {
      ApplyConflictStatus conflict = MakeApplyConflict(applied.conflicts);
      return RespondError(out, conflict.error, conflict.details);
    }
    if (type.Key() == kCrdKey) {
      Result<ResourceType> crd_type = TypeFromCrd(applied.object);
      if (!crd_type.ok()) {
        return RespondError(out, InvalidError(type.kind, path.name, crd_type.status().message()));
      }
    }
    report = pruned;
    result =
        StoreApplied(type, path, mode, created ? nullptr : &*current, std::move(applied.object),
                     &report, ReviewWith(request, path, type, query, &report));
    bool raced =
        !result.ok() && (created ? result.error().IsAlreadyExists() : result.error().IsConflict());
    if (!raced) break;
  }
  if (result.ok() && type.Key() == kCrdKey) result = AfterCrdWrite(*result);
  if (!result.ok()) return RespondError(out, result.error(), report.details, report.warnings);
  RespondJson(out, created ? 201 : 200, *result, report.warnings);
}

}  // namespace dljob::apiserver
