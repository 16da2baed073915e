#include "operator/controller/children.h"

#include "base/json_fields.h"
#include "jobs/spec_revision.h"
#include "kube/object_fields.h"

namespace dljob::controller {
namespace {

const Json& Meta(const Json& object) {
  static const Json kEmpty = Json::object();
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

EnsuredChild Classify(const kube::Resource& r, const DLJob& job, const Json& existing) {
  if (IsOwnedBy(existing, job)) return {ChildState::kExists, existing, ""};
  std::string name = kube::NameOf(existing);
  return {ChildState::kForeign, Json(),
          r.kind + " " + job.metadata.namespace_ + "/" + name +
              " already exists and is not owned by this DLJob; delete or rename it (the job "
              "needs that name)"};
}

}  // namespace

std::string OwnerJobKey(const Json& child) {
  std::string job = kube::LabelOf(child, kJobNameLabel);
  if (job.empty()) return "";
  return kube::ObjectKey(kube::NamespaceOf(child), job);
}

bool IsOwnedBy(const Json& object, const DLJob& job) {
  for (const Json& ref : Meta(object).value("ownerReferences", Json::array())) {
    if (ref.value("controller", false) && StringAt(ref, "uid") == job.metadata.uid) return true;
  }
  return false;
}

int64_t JobIncarnation(const DLJobStatus& status) {
  return status.restarts.value_or(0) + status.preemptions.value_or(0) +
         status.spec_restarts.value_or(0) + status.disruption_restarts.value_or(0) +
         status.resizes.value_or(0);
}

std::string SpecRevisionOf(const Json& pod) {
  return StringAt(Meta(pod).value("annotations", Json::object()), kSpecRevisionAnnotation);
}

int64_t IncarnationOf(const Json& pod) {
  std::string v = StringAt(Meta(pod).value("annotations", Json::object()), kIncarnationAnnotation);
  try {
    return v.empty() ? 0 : std::stoll(v);
  } catch (const std::exception&) {
    return -1;  // not one we wrote: treat as a leftover
  }
}

bool IsDeleting(const Json& object) { return Meta(object).contains("deletionTimestamp"); }

Result<Json> DesiredWorker(const DLJob& job, int64_t index, int64_t incarnation,
                           const std::string& revision, const BuildOptions& options) {
  Result<Json> pod = NewWorkerPod(job, index, options);
  if (pod.ok()) {
    (*pod)["metadata"]["annotations"][kIncarnationAnnotation] = std::to_string(incarnation);
    (*pod)["metadata"]["annotations"][kSpecRevisionAnnotation] = revision;
  }
  return pod;
}

Json DesiredLauncher(const DLJob& job, int64_t incarnation, const std::string& revision,
                     const std::vector<std::string>& worker_ips, const BuildOptions& options) {
  Json pod = NewLauncherPod(job, options, worker_ips);
  pod["metadata"]["annotations"][kIncarnationAnnotation] = std::to_string(incarnation);
  pod["metadata"]["annotations"][kSpecRevisionAnnotation] = revision;
  return pod;
}

bool IsRefusedForGood(const kube::ApiError& error) {
  int code = error.http;
  return code >= 400 && code < 500 && code != 401 && code != 408 && code != 409 && code != 429;
}

std::string RefusalMessage(const std::string& verb, const std::string& kind, const std::string& ns,
                           const std::string& name, const kube::ApiError& error) {
  std::string why = std::to_string(error.http) + (error.reason.empty() ? "" : " " + error.reason);
  return "the API server refused to " + verb + " " + kind + " " + ns + "/" + name + " (" + why +
         ")" + (error.message.empty() ? "" : ": " + error.message);
}

Result<EnsuredChild> EnsureChild(kube::Api& api, const kube::Resource& r, const DLJob& job,
                                 const Json& desired, const std::optional<Json>& cached) {
  if (cached) return Classify(r, job, *cached);
  const std::string& ns = job.metadata.namespace_;
  kube::ApiResult<Json> created = api.Create(r, ns, desired);
  if (created.ok()) return EnsuredChild{ChildState::kCreated, *created, ""};
  std::string name = kube::NameOf(desired);
  if (IsRefusedForGood(created.error())) {
    return EnsuredChild{ChildState::kRefused, Json(),
                        RefusalMessage("create", r.kind, ns, name, created.error())};
  }
  if (!created.error().IsAlreadyExists()) {
    return created.error().ToStatus().WithContext("creating " + r.kind + " " + ns + "/" + name);
  }
  kube::ApiResult<Json> existing = api.Get(r, ns, name);
  if (!existing.ok()) {
    return existing.error().ToStatus().WithContext("reading " + r.kind + " " + ns + "/" + name);
  }
  return Classify(r, job, *existing);
}

}  // namespace dljob::controller
