// RestHandler: what a client write tells the validating admission webhooks (webhook_dispatcher.h)
// — operation, resource, user, dryRun, options — and the reviewed delete. See rest_handler.h.
//
// As on the real server: a POST (and an apply that creates) is a CREATE with CreateOptions; a PUT
// or PATCH (apply included) an UPDATE with UpdateOptions; a DELETE a DELETE with DeleteOptions,
// its object null and its oldObject the object as stored. The `dryRun` parameter is passed on
// (dryRun: true) although this server still performs the write (dryRun is not modelled).
#include <algorithm>

#include "tests/apiserver/rest_handler.h"
#include "tests/apiserver/rest_response.h"

namespace dljob::apiserver {
namespace {

AdmissionAttributes AttributesOf(const ResourceType& type, const RestPath& path,
                                 const std::string& operation, const Json* old,
                                 const Json* object) {
  AdmissionAttributes a;
  a.operation = operation;
  a.group = type.group;
  a.version = type.version;
  a.resource = type.plural;
  a.subresource = path.subresource;
  a.kind = type.kind;
  a.name = NameOf(object ? *object : *old);
  if (type.namespaced) {
    a.ns = path.ns;
  } else if (!type.custom && type.group.empty() && type.plural == "namespaces") {
    a.ns = a.name;  // the real server's request namespace for a Namespace is its own name
  }
  a.object = object;
  a.old_object = old;
  return a;
}

bool DryRunAll(const QueryParams& query) {
  auto it = query.find("dryRun");
  return it != query.end() && it->second == "All";
}

// CreateOptions or UpdateOptions as the real server passes them to admission.
Json WriteOptionsOf(const std::string& kind, const QueryParams& query) {
  Json options = {{"kind", kind}, {"apiVersion", "meta.k8s.io/v1"}};
  if (DryRunAll(query)) options["dryRun"] = {"All"};
  for (const char* key : {"fieldManager", "fieldValidation"}) {
    if (auto it = query.find(key); it != query.end() && !it->second.empty()) {
      options[key] = it->second;
    }
  }
  return options;
}

Json DeleteOptionsOf(const DeleteRequest& del, const QueryParams& query) {
  Json options = {{"kind", "DeleteOptions"}, {"apiVersion", "meta.k8s.io/v1"}};
  if (del.grace_period_seconds) options["gracePeriodSeconds"] = *del.grace_period_seconds;
  if (!del.precondition_uid.empty()) options["preconditions"]["uid"] = del.precondition_uid;
  if (!del.precondition_resource_version.empty()) {
    options["preconditions"]["resourceVersion"] = del.precondition_resource_version;
  }
  if (query.count("propagationPolicy") || del.propagation_policy != "Background") {
    options["propagationPolicy"] = del.propagation_policy;
  }
  if (DryRunAll(query)) options["dryRun"] = {"All"};
  return options;
}

// The webhooks' review into `report`: warnings once each (the real server's warning recorder
// drops repeats, which a retried write would otherwise add), a refusal's details.
std::optional<ApiError> ReviewInto(const WebhookDispatcher& webhooks,
                                   const AdmissionAttributes& attributes,
                                   const ReviewContext& context, AdmissionReport* report) {
  std::vector<std::string> warnings;
  Json details;
  std::optional<ApiError> refused = webhooks.Review(attributes, context, &warnings, &details);
  for (std::string& w : warnings) {
    if (std::find(report->warnings.begin(), report->warnings.end(), w) == report->warnings.end()) {
      report->warnings.push_back(std::move(w));
    }
  }
  if (refused) report->details = std::move(details);
  return refused;
}

}  // namespace

ObjectStore::Review RestHandler::ReviewWith(const HttpRequest& request, const RestPath& path,
                                            const ResourceType& type, const QueryParams& query,
                                            AdmissionReport* report) const {
  if (!webhooks_.Active()) return nullptr;
  ReviewContext context{UserInfoOf(request.headers), DryRunAll(query), nullptr};
  return [this, type, path, query, context, report](const Json* old,
                                                    const Json& object) -> std::optional<ApiError> {
    ReviewContext ctx = context;
    ctx.options = WriteOptionsOf(old ? "UpdateOptions" : "CreateOptions", query);
    return ReviewInto(webhooks_, AttributesOf(type, path, old ? "UPDATE" : "CREATE", old, &object),
                      ctx, report);
  };
}

ApiResult<Json> RestHandler::ReviewedDelete(const HttpRequest& request, const RestPath& path,
                                            const ResourceType& type, const QueryParams& query,
                                            const DeleteRequest& del, AdmissionReport* report) {
  if (!webhooks_.Active()) return store_.Delete(type, path.ns, path.name, del);
  const ReviewContext context{UserInfoOf(request.headers), DryRunAll(query),
                              DeleteOptionsOf(del, query)};
  constexpr int kAttempts = 16;
  ApiResult<Json> deleted = BadRequestError("unreachable");
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    ApiResult<Json> current = store_.Get(type, path.ns, path.name);
    if (!current.ok()) return current;
    if (std::optional<ApiError> refused = ReviewInto(
            webhooks_, AttributesOf(type, path, "DELETE", &*current, nullptr), context, report)) {
      return *refused;
    }
    // Delete what was reviewed: a write in between makes this a conflict, and the delete starts
    // again (the client's own precondition, if any, decides instead).
    DeleteRequest reviewed = del;
    if (reviewed.precondition_resource_version.empty()) {
      reviewed.precondition_resource_version = ResourceVersionOf(*current);
    }
    deleted = store_.Delete(type, path.ns, path.name, reviewed);
    if (deleted.ok() || !deleted.error().IsConflict() ||
        !del.precondition_resource_version.empty() || !del.precondition_uid.empty()) {
      break;
    }
  }
  return deleted;
}

}  // namespace dljob::apiserver
