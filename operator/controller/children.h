// Children: how the reconciler tells its own objects from strangers' and makes the missing ones.
//
// Every child of a DLJob carries the job-name label (so informers can filter and index them) and a
// controller ownerReference with the job's uid (so the garbage collector and the reconciler know
// whose it is). An object with a child's name that lacks that reference is a stranger's: it is
// reported, never adopted or overwritten. Pods also carry the job's incarnation (JobIncarnation
// when they were made: a restart or a preemption starts the next one), so pods left over from
// before a restart or a preemption are recognised and removed even while a cache still shows them.
// Thread-safe (stateless helpers over an injected kube::Api).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "kube/api.h"
#include "operator/controller/builders.h"

namespace dljob::controller {

using Json = nlohmann::json;

inline constexpr char kIncarnationAnnotation[] = "dljob.io/incarnation";
// The PodSpecRevision (jobs/spec_revision.h) of the spec a pod was made from.
inline constexpr char kSpecRevisionAnnotation[] = "dljob.io/spec-revision";

// "namespace/<job-name label>" of a child, or "" when it has no such label.
std::string OwnerJobKey(const Json& child);
// Whether the object's controller ownerReference points at this job (by uid).
bool IsOwnedBy(const Json& object, const DLJob& job);
// The incarnation annotation of a pod (0 when missing).
int64_t IncarnationOf(const Json& pod);
// The incarnation a job's current pods belong to: status.restarts + status.preemptions +
// status.specRestarts + status.disruptionRestarts + status.resizes. Each whole-job restart, each
// preemption by the queue, each restart for a changed spec or a lost node and each resize of an
// elastic job starts a new one, so the pods of the run that ended are told apart from the next
// run's (a preemption is not a restart, but its pods are just as much on their way out).
int64_t JobIncarnation(const DLJobStatus& status);
// The spec revision annotation of a pod ("" when missing: made before revisions were recorded).
std::string SpecRevisionOf(const Json& pod);
bool IsDeleting(const Json& object);  // metadata.deletionTimestamp is set

// The builders' pods, stamped with the incarnation and the job's spec revision (`revision`:
// PodSpecRevision(job), computed once by the caller). `worker_ips`: WorkerPodIps (builders.h).
Result<Json> DesiredWorker(const DLJob& job, int64_t index, int64_t incarnation,
                           const std::string& revision, const BuildOptions& options);
Json DesiredLauncher(const DLJob& job, int64_t incarnation, const std::string& revision,
                     const std::vector<std::string>& worker_ips, const BuildOptions& options);

// Whether the server refused a request for good, so that sending it again cannot help: a 4xx
// other than 401 (the operator's own credentials, refreshed by the client), 408 (a timeout),
// 409 (a conflict the caller settles) and 429 (throttled). 422 Invalid, 400, 403 Forbidden
// (RBAC, a quota, admission) and 404 (the namespace is gone) are. 5xx and transport failures
// are retried instead.
bool IsRefusedForGood(const kube::ApiError& error);
// The reason a job fails with when the server refuses to create one of its children, as the
// Kubernetes controllers name that Event.
inline constexpr char kFailedCreateReason[] = "FailedCreate";
// "the API server refused to <verb> <Kind> <ns>/<name> (<http> <reason>): <message>".
std::string RefusalMessage(const std::string& verb, const std::string& kind, const std::string& ns,
                           const std::string& name, const kube::ApiError& error);

enum class ChildState {
  kExists,
  kCreated,
  kForeign,  // a stranger's object holds the name
  kRefused,  // the server refused to create it for good (IsRefusedForGood)
};

struct EnsuredChild {
  ChildState state = ChildState::kExists;
  Json object;  // what exists now (ours), when kExists or kCreated
  // kForeign: what is in the way and what to do about it; kRefused: RefusalMessage.
  std::string message;
};

// Makes sure `desired` exists: `cached` is the informer's copy of that name, if it has one. Creates
// it when missing; an AlreadyExists answer (the cache was behind, or the object lacks our label) is
// settled by a GET; a refusal for good is kRefused. Errors are API failures other than those.
Result<EnsuredChild> EnsureChild(kube::Api& api, const kube::Resource& r, const DLJob& job,
                                 const Json& desired, const std::optional<Json>& cached);

}  // namespace dljob::controller
