// RestHandler: get, list, create, update, patch and delete of objects, and the CRD side effects.
// See rest_handler.h.
#include "base/time_format.h"
#include "tests/apiserver/admission.h"
#include "tests/apiserver/protobuf.h"
#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/rest_response.h"
#include "tests/apiserver/strategic_patch.h"
#include "tests/apiserver/table.h"

namespace dljob::apiserver {
namespace {

ApiResult<Json> ParseBody(const HttpRequest& request) {
  if (request.body.empty()) return BadRequestError("the request body is empty; send a JSON object");
  std::string content_type = RequestHeader(request, "Content-Type");
  content_type = content_type.substr(0, content_type.find(';'));
  if (content_type == kProtobufMediaType) return DecodeProtobufObject(request.body);
  if (!content_type.empty() && content_type != "application/json" &&
      content_type != "application/yaml" && content_type.find("json") == std::string::npos) {
    return ErrorForCode(415,
                        "the body of the request was in an unknown format - accepted media "
                        "types include: application/json, application/yaml, " +
                            std::string(kProtobufMediaType));
  }
  Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return BadRequestError("the request body is not valid JSON");
  return body;
}

ObjectStore::Part PartOf(const RestPath& path) {
  return path.subresource == "status" ? ObjectStore::Part::kStatus : ObjectStore::Part::kMain;
}

std::chrono::system_clock::time_point Now(const StoreOptions& options) {
  return options.now ? options.now() : std::chrono::system_clock::now();
}

}  // namespace

ObjectStore::Admission RestHandler::AdmitWith(const ResourceType& type, FieldValidation mode,
                                              bool patch, AdmissionReport* report,
                                              ManagedFieldsFn managed) {
  return [&type, mode, patch, report, managed = std::move(managed)](
             const Json* old, Json& object) -> std::optional<ApiError> {
    if (std::optional<ApiError> refused = Admit(type, mode, patch, old, object, report)) {
      return refused;
    }
    SetManagedFields(object, managed(old, object));
    return std::nullopt;
  };
}

WriteContext RestHandler::FieldsContext(const ResourceType& type, const RestPath& path,
                                        const std::string& manager) const {
  WriteContext ctx{FieldType::RootOf(type), manager,          type.ApiVersion(),
                   path.subresource,        FieldScope::kAll, FormatRfc3339(Now(options_.store))};
  if (path.subresource == "status") {
    ctx.scope = FieldScope::kOnlyStatus;
  } else if (type.has_status) {
    ctx.scope = FieldScope::kAllButStatus;
  }
  return ctx;
}

void RestHandler::ServeResource(const HttpRequest& request, const RestPath& path,
                                const ResourceType& type, ResponseWriter& out) {
  const QueryParams query = ParseQuery(request.query);
  const std::string& m = request.method;
  const std::string& sub = path.subresource;
  bool status_ok = sub.empty() || (sub == "status" && type.has_status);
  if (type.Key() == "pods" && (sub == "binding" || sub == "log")) {
    if (sub == "binding" && m == "POST") return ServeBinding(request, path, type, out);
    if (sub == "log" && m == "GET") return ServeLog(request, path, query, out);
    return RespondError(out, MethodNotAllowedError("the server does not allow this method on the "
                                                   "requested resource"));
  }
  if (!status_ok || (path.name.empty() && !sub.empty())) {
    return RespondError(out, ErrorForCode(404, "the server could not find the requested resource"));
  }
  if (type.namespaced && path.ns.empty() && (m != "GET" || !path.name.empty())) {
    return RespondError(out, ErrorForCode(404, "the server could not find the requested resource"));
  }
  bool table = WantsTable(RequestHeader(request, "Accept"));
  if (m == "GET" && path.name.empty()) {
    if (QueryFlag(query, "watch")) return ServeWatch(request, path, type, query, out);
    return ServeList(request, path, type, query, out);
  }
  if (m == "GET") {
    ApiResult<Json> got = store_.Get(type, path.ns, path.name);
    if (!got.ok()) return RespondError(out, got.error());
    if (!table) return RespondJson(out, 200, *got);
    auto include = query.count("includeObject") ? query.at("includeObject") : "Metadata";
    return RespondJson(
        out, 200,
        ObjectsToTable(type, {*got}, ResourceVersionOf(*got), "", include, Now(options_.store)));
  }
  ApiResult<FieldValidation> mode = ParseFieldValidation(query);
  if (!mode.ok() && (m == "POST" || m == "PUT" || m == "PATCH")) {
    return RespondError(out, mode.error());
  }
  AdmissionReport report;
  const std::string manager = FieldManagerOf(query, RequestHeader(request, "User-Agent"));
  auto updated_fields = [ctx = FieldsContext(type, path, manager)](const Json* old,
                                                                   const Json& object) {
    return UpdatedManagedFields(ctx, old, object);
  };
  if (m == "POST" || m == "PUT") {
    if (std::optional<InvalidStatus> invalid =
            ValidateWriteOptions(m == "POST" ? "CreateOptions" : "UpdateOptions", query, false)) {
      return RespondError(out, invalid->error, invalid->details);
    }
  }
  if (m == "POST" && path.name.empty()) {
    ApiResult<Json> body = ParseBody(request);
    if (!body.ok()) return RespondError(out, body.error());
    if (type.Key() == kCrdKey) {
      Result<ResourceType> crd_type = TypeFromCrd(*body);
      if (!crd_type.ok()) {
        return RespondError(out,
                            InvalidError(type.kind, NameOf(*body), crd_type.status().message()));
      }
    }
    ApiResult<Json> created = store_.Create(type, path.ns, std::move(body).value(),
                                            AdmitWith(type, *mode, false, &report, updated_fields),
                                            ReviewWith(request, path, type, query, &report));
    if (created.ok() && type.Key() == kCrdKey) created = AfterCrdWrite(*created);
    if (!created.ok()) return RespondError(out, created.error(), report.details, report.warnings);
    return RespondJson(out, 201, *created, report.warnings);
  }
  if (m == "PUT" && !path.name.empty()) {
    ApiResult<Json> body = ParseBody(request);
    if (!body.ok()) return RespondError(out, body.error());
    ApiResult<Json> updated =
        store_.Update(type, path.ns, path.name, std::move(body).value(), PartOf(path),
                      AdmitWith(type, *mode, false, &report, updated_fields),
                      ReviewWith(request, path, type, query, &report));
    if (updated.ok() && type.Key() == kCrdKey) updated = AfterCrdWrite(*updated);
    if (!updated.ok()) return RespondError(out, updated.error(), report.details, report.warnings);
    return RespondJson(out, 200, *updated, report.warnings);
  }
  if (m == "PATCH" && !path.name.empty()) return ServePatch(request, path, type, *mode, out);
  if (m == "DELETE" && !path.name.empty() && sub.empty()) {
    return ServeDelete(request, path, type, query, out);
  }
  RespondError(out, MethodNotAllowedError("the server does not allow this method on the "
                                          "requested resource"));
}

void RestHandler::ServeList(const HttpRequest& request, const RestPath& path,
                            const ResourceType& type, const QueryParams& query,
                            ResponseWriter& out) {
  ListQuery list_query;
  auto param = [&](const char* key) { return query.count(key) ? query.at(key) : std::string(); };
  Result<LabelSelector> labels = LabelSelector::Parse(param("labelSelector"));
  if (!labels.ok()) return RespondError(out, BadRequestError(labels.status().message()));
  Result<FieldSelector> fields = FieldSelector::Parse(param("fieldSelector"));
  if (!fields.ok()) return RespondError(out, BadRequestError(fields.status().message()));
  list_query.labels = *labels;
  list_query.fields = *fields;
  list_query.continue_token = param("continue");
  if (!param("limit").empty()) {
    try {
      list_query.limit = std::stoll(param("limit"));
    } catch (...) {
      return RespondError(
          out, BadRequestError("limit: must be an integer, got \"" + param("limit") + "\""));
    }
  }
  ApiResult<Json> list = store_.List(type, path.ns, list_query);
  if (!list.ok()) return RespondError(out, list.error());
  if (!WantsTable(RequestHeader(request, "Accept"))) return RespondJson(out, 200, *list);
  std::vector<Json> items((*list)["items"].begin(), (*list)["items"].end());
  std::string include = param("includeObject").empty() ? "Metadata" : param("includeObject");
  RespondJson(
      out, 200,
      ObjectsToTable(type, items, (*list)["metadata"].value("resourceVersion", ""),
                     (*list)["metadata"].value("continue", ""), include, Now(options_.store)));
}

void RestHandler::ServePatch(const HttpRequest& request, const RestPath& path,
                             const ResourceType& type, FieldValidation mode, ResponseWriter& out) {
  std::string content_type = RequestHeader(request, "Content-Type");
  content_type = content_type.substr(0, content_type.find(';'));
  bool merge = content_type == "application/merge-patch+json";
  bool strategic = content_type == "application/strategic-merge-patch+json" && !type.custom;
  bool json_patch = content_type == "application/json-patch+json";
  bool apply = content_type == "application/apply-patch+yaml";
  if (!merge && !strategic && !json_patch && !apply) {
    return RespondError(
        out, ErrorForCode(415, std::string("the body of the request was in an unknown format - "
                                           "accepted media types include: "
                                           "application/json-patch+json, "
                                           "application/merge-patch+json, ") +
                                   (type.custom ? "" : "application/strategic-merge-patch+json, ") +
                                   "application/apply-patch+yaml"));
  }
  const QueryParams query = ParseQuery(request.query);
  if (std::optional<InvalidStatus> invalid = ValidateWriteOptions("PatchOptions", query, apply)) {
    return RespondError(out, invalid->error, invalid->details);
  }
  if (apply) return ServeApply(request, path, type, mode, query, out);
  AdmissionReport report;
  WriteContext ctx =
      FieldsContext(type, path, FieldManagerOf(query, RequestHeader(request, "User-Agent")));
  ObjectStore::Admission admit =
      AdmitWith(type, mode, true, &report, [&ctx](const Json* old, const Json& object) {
        return UpdatedManagedFields(ctx, old, object);
      });
  ObjectStore::Review review = ReviewWith(request, path, type, query, &report);
  ApiResult<Json> patch = ParseBody(request);
  if (!patch.ok()) return RespondError(out, patch.error());
  ApiResult<Json> result = BadRequestError("unreachable");
  if (merge) {
    result = store_.MergePatch(type, path.ns, path.name, *patch, PartOf(path), admit, review);
  } else {
    // Read, patch, write back at the version read; retry when someone wrote in between.
    for (int attempt = 0; attempt < 5; ++attempt) {
      ApiResult<Json> current = store_.Get(type, path.ns, path.name);
      if (!current.ok()) return RespondError(out, current.error());
      Json patched;
      if (strategic) {
        patched = ApplyStrategicPatch(*current, *patch);
      } else {
        try {
          patched = current->patch(*patch);
        } catch (const nlohmann::json::exception& e) {
          return RespondError(
              out, ErrorForCode(422, std::string("the JSON patch does not apply: ") + e.what()));
        }
      }
      patched["metadata"]["resourceVersion"] = ResourceVersionOf(*current);
      report = {};
      result =
          store_.Update(type, path.ns, path.name, std::move(patched), PartOf(path), admit, review);
      if (result.ok() || !result.error().IsConflict()) break;
    }
  }
  if (result.ok() && type.Key() == kCrdKey) result = AfterCrdWrite(*result);
  if (!result.ok()) return RespondError(out, result.error(), report.details, report.warnings);
  RespondJson(out, 200, *result, report.warnings);
}

void RestHandler::ServeDelete(const HttpRequest& request, const RestPath& path,
                              const ResourceType& type, const QueryParams& query,
                              ResponseWriter& out) {
  DeleteRequest del;
  if (!request.body.empty()) {
    ApiResult<Json> body = ParseBody(request);
    if (!body.ok()) return RespondError(out, body.error());
    del.propagation_policy = body->value("propagationPolicy", del.propagation_policy);
    if (body->value("orphanDependents", false)) del.propagation_policy = "Orphan";
    if (body->contains("gracePeriodSeconds") && (*body)["gracePeriodSeconds"].is_number_integer()) {
      del.grace_period_seconds = (*body)["gracePeriodSeconds"].get<int64_t>();
    }
    if (body->contains("preconditions") && (*body)["preconditions"].is_object()) {
      del.precondition_uid = (*body)["preconditions"].value("uid", "");
      del.precondition_resource_version = (*body)["preconditions"].value("resourceVersion", "");
    }
  }
  if (query.count("propagationPolicy")) del.propagation_policy = query.at("propagationPolicy");
  if (query.count("gracePeriodSeconds")) {
    try {
      del.grace_period_seconds = std::stoll(query.at("gracePeriodSeconds"));
    } catch (...) {
      return RespondError(out, BadRequestError("gracePeriodSeconds: must be an integer, got \"" +
                                               query.at("gracePeriodSeconds") + "\""));
    }
  }
  AdmissionReport report;
  ApiResult<Json> deleted = ReviewedDelete(request, path, type, query, del, &report);
  if (!deleted.ok()) return RespondError(out, deleted.error(), report.details, report.warnings);
  if (type.Key() == kCrdKey) AfterCrdDelete(*deleted);
  if (type.Key() == "pods" && !store_.Get(type, path.ns, path.name).ok()) {
    logs_.Erase(path.ns + "/" + path.name);
  }
  RespondJson(out, 200, *deleted, report.warnings);
}

ApiResult<Json> RestHandler::AfterCrdWrite(const Json& crd) {
  Result<ResourceType> type = TypeFromCrd(crd);
  if (!type.ok())
    return InvalidError("CustomResourceDefinition", NameOf(crd), type.status().message());
  registry_.Remove(type->group, type->plural);
  registry_.Add(*type);
  ResourceType crds = *registry_.FindByKey(kCrdKey);
  std::string now = FormatRfc3339(Now(options_.store));
  return store_.Mutate(crds, "", NameOf(crd), [&](Json& object) -> std::optional<ApiError> {
    Json names = object["spec"].value("names", Json::object());
    if (!names.contains("singular")) names["singular"] = type->singular;
    if (!names.contains("listKind")) names["listKind"] = type->ListKind();
    Json& status = object["status"];
    if (status.is_object() && status.contains("acceptedNames") &&
        status["acceptedNames"] == names) {
      return std::nullopt;  // already established with these names: no new version
    }
    status = {{"acceptedNames", names},
              {"storedVersions", {type->version}},
              {"conditions",
               {{{"type", "NamesAccepted"},
                 {"status", "True"},
                 {"reason", "NoConflicts"},
                 {"message", "no conflicts found"},
                 {"lastTransitionTime", now}},
                {{"type", "Established"},
                 {"status", "True"},
                 {"reason", "InitialNamesAccepted"},
                 {"message", "the initial names have been accepted"},
                 {"lastTransitionTime", now}}}}};
    return std::nullopt;
  });
}

void RestHandler::AfterCrdDelete(const Json& crd) {
  Result<ResourceType> type = TypeFromCrd(crd);
  if (!type.ok()) return;
  store_.DeleteAll(*type);
  registry_.Remove(type->group, type->plural);
}

}  // namespace dljob::apiserver
