#include "operator/controller/gang_binding.h"

#include <algorithm>
#include <functional>

#include "base/json_fields.h"
#include "kube/object_fields.h"
#include "kube/runtime/store.h"
#include "operator/controller/children.h"

namespace dljob::controller {
namespace {

using kube::NameOf;
using kube::NodeNameOf;
using kube::ObjectKey;
using kube::UidOf;

PodClaim ClaimOf(const Json& pod) { return {ObjectKey(pod), UidOf(pod)}; }

bool SamePod(const Json& seen, const Json& now) {
  return UidOf(seen).empty() || UidOf(seen) == UidOf(now);
}

// How one create or bind went.
struct Answer {
  bool ok = false;  // the pod exists, bound to the chosen node
  // Not ok, but the pod is the job's, of this run, and holds a node or a name: the undo deletes
  // it with the rest (bound elsewhere, or created by an earlier attempt that was not placed).
  bool held = false;
  std::optional<Json> pod;  // a create's pod when ok or held (a bind's pod is the caller's)
  std::string error;
  // kBindFailed; kWait when the name is held by the job's pod of its previous run;
  // kNameConflict when it is held by a pod that is not the job's.
  GangState state = GangState::kBindFailed;
  // The server refused the request for good (IsRefusedForGood, but not a 404).
  std::optional<kube::ApiError> refusal;
};

// Sends `request` until it succeeds, fails for good, or runs out of `retry`'s attempts; retried
// after 5xx, 429 and transport failures, since a repeated create or bind is settled by a 409.
kube::ApiResult<Json> WithRetries(Clock& clock, const kube::RetryOptions& retry,
                                  const std::function<kube::ApiResult<Json>()>& request) {
  kube::ApiResult<Json> r = request();
  for (int n = 1; !r.ok() && n < retry.max_attempts &&
                  kube::ShouldRetry(kube::Idempotency::kIdempotent, r.error());
       ++n) {
    clock.SleepFor(kube::BackoffDelay(retry, n, std::nullopt, 0.5));
    r = request();
  }
  return r;
}

Answer Done(std::optional<Json> pod = std::nullopt) {
  Answer a;
  a.ok = true;
  a.pod = std::move(pod);
  return a;
}

Answer Unsettled(std::string error, GangState state = GangState::kBindFailed) {
  Answer a;
  a.error = std::move(error);
  a.state = state;
  return a;
}

Answer Held(std::string error, std::optional<Json> pod = std::nullopt) {
  Answer a;
  a.held = true;
  a.error = std::move(error);
  a.pod = std::move(pod);
  return a;
}

// A failed request's answer: a refusal for good is recorded, a 404 (the pod or its namespace
// deleted meanwhile) is not one.
Answer Failed(const kube::ApiError& error) {
  Answer a;
  a.error = error.ToString();
  if (IsRefusedForGood(error) && !error.IsNotFound()) a.refusal = error;
  return a;
}

// One bind. A 409 is settled by reading the pod: bound to `node` (the same pod, not being
// deleted) it is done — an earlier attempt landed.
Answer BindOne(kube::Api& api, Clock& clock, const kube::RetryOptions& retry, const std::string& ns,
               const Json& pod, const std::string& node) {
  const std::string name = NameOf(pod);
  kube::ApiResult<Json> bound = WithRetries(clock, retry, [&] { return api.Bind(ns, name, node); });
  if (bound.ok()) return Done();
  if (!bound.error().IsConflict()) return Failed(bound.error());
  const std::string error = bound.error().ToString();
  kube::ApiResult<Json> now = api.Get(kube::resources::kPods, ns, name);
  if (!now.ok()) {
    return Unsettled(error + " (reading the pod: " + now.error().ToString() + ")");
  }
  if (!SamePod(pod, *now)) return Unsettled(error + " (the pod was replaced)");
  if (NodeNameOf(*now) == node && !IsDeleting(*now)) return Done();
  if (NodeNameOf(*now).empty()) return Unsettled(error);
  return Held(NodeNameOf(*now) == node ? "it is being deleted"
                                       : "it is bound to node " + NodeNameOf(*now) + " already");
}

// One create of `desired` with spec.nodeName `node`. An AlreadyExists is settled by reading the
// pod: the job's pod of this run on `node`, not being deleted, is done — an earlier attempt
// landed.
Answer CreateOne(kube::Api& api, Clock& clock, const kube::RetryOptions& retry, const DLJob& job,
                 const Json& desired, const std::string& node) {
  const std::string& ns = job.metadata.namespace_;
  const std::string name = NameOf(desired);
  Json pod = desired;
  pod["spec"]["nodeName"] = node;
  kube::ApiResult<Json> created =
      WithRetries(clock, retry, [&] { return api.Create(kube::resources::kPods, ns, pod); });
  if (created.ok()) return Done(std::move(*created));
  if (!created.error().IsAlreadyExists()) return Failed(created.error());
  const std::string error = created.error().ToString();
  kube::ApiResult<Json> now = api.Get(kube::resources::kPods, ns, name);
  if (!now.ok()) {
    return Unsettled(error + " (reading the pod: " + now.error().ToString() + ")");
  }
  if (!IsOwnedBy(*now, job)) {
    return Unsettled("pod " + ns + "/" + name +
                         " already exists and is not owned by this DLJob; delete or rename it "
                         "(the job needs that name)",
                     GangState::kNameConflict);
  }
  if (IncarnationOf(*now) != IncarnationOf(desired)) {
    return Unsettled("pod " + ns + "/" + name + " of the job's previous run is going away",
                     GangState::kWait);
  }
  if (NodeNameOf(*now) == node && !IsDeleting(*now)) return Done(*now);
  std::string where = IsDeleting(*now)           ? "it is being deleted"
                      : NodeNameOf(*now).empty() ? "it exists unbound"
                                                 : "it is bound to node " + NodeNameOf(*now);
  return Held(error + " (" + where + ")", std::move(*now));
}

// Whether the server still has this very pod bound and not being deleted; takes its node.
Result<bool> Confirm(kube::Api& api, const std::string& ns, Json& pod) {
  kube::ApiResult<Json> now = api.Get(kube::resources::kPods, ns, NameOf(pod));
  if (!now.ok() && now.error().IsNotFound()) return false;
  if (!now.ok()) return now.error().ToStatus().WithContext("reading pod " + ns + "/" + NameOf(pod));
  if (!SamePod(pod, *now) || NodeNameOf(*now).empty() || IsDeleting(*now)) return false;
  pod["spec"]["nodeName"] = NodeNameOf(*now);
  return true;
}

// Deletes the bound workers of a gang being undone: only these very pods (a uid precondition
// spares one recreated under the same name). Returns their names.
Result<std::vector<std::string>> Release(kube::Api& api, const std::string& ns,
                                         const std::vector<Json*>& pods) {
  std::vector<std::string> names;
  for (const Json* pod : pods) {
    kube::DeleteOptions options;
    options.precondition_uid = UidOf(*pod);
    kube::ApiResult<Json> r = api.Delete(kube::resources::kPods, ns, NameOf(*pod), options);
    if (!r.ok() && !r.error().IsNotFound() && !r.error().IsConflict()) {
      return r.error().ToStatus().WithContext("deleting pod " + ns + "/" + NameOf(*pod) +
                                              " to undo a half-bound gang");
    }
    names.push_back(NameOf(*pod));
  }
  return names;
}

void Drop(std::vector<GangWorker>& workers, const std::vector<std::string>& names) {
  std::erase_if(workers, [&](const GangWorker& w) {
    return w.exists && std::find(names.begin(), names.end(), NameOf(w.pod)) != names.end();
  });
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

kube::RetryOptions DefaultBindRetry() {
  kube::RetryOptions r;
  r.max_attempts = 3;
  r.initial_backoff = std::chrono::milliseconds(100);
  r.jitter = 0;
  return r;
}

Result<GangOutcome> BindGang(kube::Api& api, Clock& clock, GpuLedger& ledger, const DLJob& job,
                             std::vector<GangWorker>& workers, const kube::RetryOptions& retry) {
  const std::string& ns = job.metadata.namespace_;
  for (const GangWorker& w : workers) {
    if (w.exists && IsDeleting(w.pod)) {
      return GangOutcome{
          GangState::kWait, "worker " + NameOf(w.pod) + " is being deleted", {}, {}, ""};
    }
  }
  std::vector<Json*> before;      // existing and bound already, as the cache shows them
  std::vector<GangWorker*> todo;  // to bind or to create
  std::vector<PodClaim> claims;   // of every worker, for Forget
  for (GangWorker& w : workers) {
    claims.push_back(ClaimOf(w.pod));
    if (w.exists && !NodeNameOf(w.pod).empty()) {
      before.push_back(&w.pod);
    } else {
      todo.push_back(&w);
    }
  }
  if (todo.empty()) return GangOutcome{};
  std::vector<PodClaim> todo_claims;
  for (const GangWorker* w : todo) todo_claims.push_back(ClaimOf(w->pod));
  Result<std::vector<Seat>> seats =
      ledger.PlaceAndAssume(ObjectKey(ns, job.metadata.name), job, todo_claims);
  if (!seats.ok()) {
    GangOutcome out{GangState::kNoRoom, seats.status().message(), {}, {}, ""};
    if (before.empty()) return out;
    ledger.Forget(claims);
    Result<std::vector<std::string>> released = Release(api, ns, before);
    if (!released.ok()) return released.status();
    out.released = std::move(*released);
    Drop(workers, out.released);
    return out;
  }
  // A seat that is not fresh is one the ledger knew bound or assumed already. A worker missing
  // from the cache with such a seat was made by an earlier pass (its assumption outlives a failed
  // create only until Forget): the cache is behind, and the pod's event brings the job back.
  for (size_t i = 0; i < todo.size(); ++i) {
    if (todo[i]->exists || (*seats)[i].fresh) continue;
    std::vector<PodClaim> fresh;
    for (size_t j = 0; j < todo.size(); ++j) {
      if ((*seats)[j].fresh) fresh.push_back(todo_claims[j]);
    }
    ledger.Forget(fresh);
    return GangOutcome{GangState::kWait,
                       "worker " + NameOf(todo[i]->pod) + " was placed on node " +
                           (*seats)[i].node + " and is not in the cache yet",
                       {},
                       {},
                       ""};
  }
  auto acts = [&](size_t i) { return (*seats)[i].fresh; };
  bool any = false;
  for (size_t i = 0; i < todo.size(); ++i) any = any || acts(i);
  std::vector<Json*> bound = before;  // every worker bound so far, by anyone
  for (size_t i = 0; i < todo.size(); ++i) {
    if (acts(i)) continue;
    if (!any) todo[i]->pod["spec"]["nodeName"] = (*seats)[i].node;  // the ledger knows it bound
    bound.push_back(&todo[i]->pod);
  }
  if (!any) return GangOutcome{};
  // Completing a gang around workers this pass does not bind: the server confirms them first.
  for (Json* w : bound) {
    Result<bool> there = Confirm(api, ns, *w);
    if (there.ok() && *there) continue;
    ledger.Forget(claims);
    if (!there.ok()) return there.status();
    return GangOutcome{GangState::kWait,
                       "worker " + NameOf(*w) +
                           " is no longer bound on the server; waiting for the cache to catch up",
                       {},
                       {},
                       ""};
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    if (!acts(i)) continue;
    GangWorker& w = *todo[i];
    const std::string& node = (*seats)[i].node;
    const bool create = !w.exists;
    const std::string name = NameOf(w.pod);  // `w` may go with the undo's Drop below
    Answer a = create ? CreateOne(api, clock, retry, job, w.pod, node)
                      : BindOne(api, clock, retry, ns, w.pod, node);
    if (a.ok) {
      if (create) {
        w.pod = std::move(*a.pod);
        w.exists = true;
      } else {
        w.pod["spec"]["nodeName"] = node;
      }
      bound.push_back(&w.pod);
      continue;
    }
    ledger.Forget(claims);
    if (a.held) {  // the job's pod of this run, but not where it was placed: undone with the rest
      if (create) {
        w.pod = std::move(*a.pod);
        w.exists = true;
      }
      bound.push_back(&w.pod);
    }
    Result<std::vector<std::string>> released = Release(api, ns, bound);
    if (!released.ok()) return released.status();
    Drop(workers, *released);
    if (a.state != GangState::kBindFailed) {
      std::string undone =
          released->empty() ? "" : "; deleted the workers bound so far (" + Join(*released) + ")";
      return GangOutcome{a.state, a.error + undone, *released, {}, ""};
    }
    std::string why = (create ? "creating pod " : "binding pod ") + ns + "/" + name +
                      (create ? " on node " : " to node ") + node + " failed: " + a.error + "; ";
    why += released->empty() ? "no worker was bound"
                             : "deleted the " + std::to_string(released->size()) +
                                   (released->size() == 1 ? " worker" : " workers") +
                                   " bound so far (" + Join(*released) + ")";
    GangOutcome out{GangState::kBindFailed, why + ", to place the job again", *released, {}, ""};
    if (a.refusal) {
      out.refused =
          RefusalMessage(create ? "create" : "bind", "Pod", ns, name, *a.refusal) + "; " +
          (released->empty() ? "no worker was bound" : "deleted the workers bound so far");
      out.refused_reason = create ? kFailedCreateReason : "FailedBind";
    }
    return out;
  }
  return GangOutcome{};
}

std::optional<Json> UnschedulablePatch(const Json& pod, const std::string& message,
                                       const std::string& now) {
  if (!NodeNameOf(pod).empty()) return std::nullopt;
  Json conditions = Json::array();
  std::string since = now;
  const Json& old = FieldOf(FieldOf(pod, "status"), "conditions");
  if (old.is_array()) {
    for (const Json& c : old) {
      if (StringAt(c, "type") != "PodScheduled") {
        conditions.push_back(c);
        continue;
      }
      if (StringAt(c, "status") != "False") continue;
      if (StringAt(c, "reason") == "Unschedulable" && StringAt(c, "message") == message)
        return std::nullopt;
      if (!StringAt(c, "lastTransitionTime").empty()) since = StringAt(c, "lastTransitionTime");
    }
  }
  conditions.push_back({{"type", "PodScheduled"},
                        {"status", "False"},
                        {"reason", "Unschedulable"},
                        {"message", message},
                        {"lastProbeTime", nullptr},
                        {"lastTransitionTime", since}});
  return Json{{"status", {{"conditions", std::move(conditions)}}}};
}

void MarkUnschedulable(kube::Api& api, const std::string& ns, std::vector<Json>& workers,
                       const std::string& message, const std::string& now) {
  for (Json& w : workers) {
    if (IsDeleting(w)) continue;
    std::optional<Json> patch = UnschedulablePatch(w, message, now);
    if (!patch) continue;
    kube::ApiResult<Json> r =
        api.MergePatch(kube::resources::kPods, ns, NameOf(w), *patch, "status");
    if (r.ok()) w = std::move(*r);  // best effort: the next pass tries again
  }
}

}  // namespace dljob::controller
