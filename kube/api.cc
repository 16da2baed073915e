// See api.h.
#include "kube/api.h"

#include "base/json_fields.h"

namespace dljob::kube {

namespace resources {
const Resource kPods{"", "v1", "pods", true, "Pod"};
const Resource kServices{"", "v1", "services", true, "Service"};
const Resource kConfigMaps{"", "v1", "configmaps", true, "ConfigMap"};
const Resource kSecrets{"", "v1", "secrets", true, "Secret"};
const Resource kEvents{"", "v1", "events", true, "Event"};
const Resource kNodes{"", "v1", "nodes", false, "Node"};
const Resource kLeases{"coordination.k8s.io", "v1", "leases", true, "Lease"};
const Resource kDeployments{"apps", "v1", "deployments", true, "Deployment"};
const Resource kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets", true,
                                     "PodDisruptionBudget"};
const Resource kPodDisruptionBudgetsV1beta1{"policy", "v1beta1", "poddisruptionbudgets", true,
                                            "PodDisruptionBudget"};
const Resource kDLJobs{"dljob.io", "v1alpha1", "dljobs", true, "DLJob"};
const Resource kDLQueues{"dljob.io", "v1alpha1", "dlqueues", false, "DLQueue"};
}  // namespace resources

ApiResult<ReadyLine> LineStream::TryNext() {
  ApiResult<std::optional<std::string>> next = Next();
  if (!next.ok()) return next.error();
  ReadyLine out;
  out.end = !next->has_value();
  out.line = std::move(*next);
  return out;
}

std::string ApiError::ToString() const {
  if (http == 0 && reason == kReasonDeadline) return message;  // refused here, not a connection
  if (http == 0) return reason == kReasonNoCredentials ? message : "connection failed: " + message;
  std::string out = std::to_string(http);
  if (!reason.empty()) out += " " + reason;
  return out + ": " + message;
}

Status ApiError::ToStatus() const {
  StatusCode code = StatusCode::kInternal;
  if (IsNotFound()) {
    code = StatusCode::kNotFound;
  } else if (IsAlreadyExists()) {
    code = StatusCode::kAlreadyExists;
  } else if (IsConflict() || IsGone()) {
    code = StatusCode::kFailedPrecondition;
  } else if (IsInvalid() || http == 400) {
    code = StatusCode::kInvalidArgument;
  } else if (IsRetryable()) {
    code = StatusCode::kUnavailable;
  }
  return Status(code, ToString());
}

namespace {

// Api::WithDeadline's default: every call forwarded as it is (see api.h).
class UnboundedView final : public Api {
 public:
  explicit UnboundedView(Api& api) : api_(api) {}

  ApiResult<Json> Get(const Resource& r, const std::string& ns, const std::string& name) override {
    return api_.Get(r, ns, name);
  }
  ApiResult<Json> List(const Resource& r, const std::string& ns,
                       const ListOptions& options) override {
    return api_.List(r, ns, options);
  }
  ApiResult<Json> Create(const Resource& r, const std::string& ns, const Json& object) override {
    return api_.Create(r, ns, object);
  }
  ApiResult<Json> Replace(const Resource& r, const std::string& ns, const Json& object) override {
    return api_.Replace(r, ns, object);
  }
  ApiResult<Json> ReplaceStatus(const Resource& r, const std::string& ns,
                                const Json& object) override {
    return api_.ReplaceStatus(r, ns, object);
  }
  ApiResult<Json> MergePatch(const Resource& r, const std::string& ns, const std::string& name,
                             const Json& patch, const std::string& subresource) override {
    return api_.MergePatch(r, ns, name, patch, subresource);
  }
  ApiResult<Json> Delete(const Resource& r, const std::string& ns, const std::string& name,
                         const DeleteOptions& options) override {
    return api_.Delete(r, ns, name, options);
  }
  ApiResult<WatchStreamPtr> Watch(const Resource& r, const std::string& ns,
                                  const ListOptions& options) override {
    return api_.Watch(r, ns, options);
  }
  ApiResult<Json> Bind(const std::string& ns, const std::string& pod,
                       const std::string& node) override {
    return api_.Bind(ns, pod, node);
  }
  ApiResult<LineStreamPtr> Logs(const std::string& ns, const std::string& pod,
                                const LogOptions& options) override {
    return api_.Logs(ns, pod, options);
  }

 private:
  Api& api_;
};

}  // namespace

ApiResult<std::string> Api::ServiceProxyGet(const std::string& ns, const std::string& service,
                                            const std::string& path, const std::string&) {
  return ApiError{0, kReasonUnsupported,
                  "this client cannot reach Service " + ns + "/" + service + " for " + path};
}

std::unique_ptr<Api> Api::WithDeadline(Clock::MonotonicTime) {
  return std::make_unique<UnboundedView>(*this);
}

ApiResult<std::string> ListEach(Api& api, const Resource& r, const std::string& ns,
                                ListOptions options, const std::function<void(Json&&)>& take) {
  std::string version;
  bool first = true;
  while (true) {
    ApiResult<Json> page = api.List(r, ns, options);
    if (!page.ok()) return page.error();
    const Json& metadata = FieldOf(*page, "metadata");
    if (first) version = StringAt(metadata, "resourceVersion");
    first = false;
    options.continue_token = StringAt(metadata, "continue");
    if (auto items = page->find("items"); items != page->end() && items->is_array()) {
      for (Json& item : *items) take(std::move(item));
    }
    if (options.continue_token.empty()) return version;
  }
}

ApiResult<Json> ListAll(Api& api, const Resource& r, const std::string& ns, ListOptions options) {
  Json items = Json::array();
  ApiResult<std::string> version = ListEach(
      api, r, ns, std::move(options), [&items](Json&& item) { items.push_back(std::move(item)); });
  if (!version.ok()) return version.error();
  return Json{{"apiVersion", r.ApiVersion()},
              {"kind", r.kind + "List"},
              {"metadata", {{"resourceVersion", *version}}},
              {"items", std::move(items)}};
}

}  // namespace dljob::kube
