#include "operator/controller/gang_binding.h"

#include <algorithm>

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

struct BindAnswer {
  bool ok = false;     // bound to the chosen node
  bool bound = false;  // not ok, but bound all the same (elsewhere, or being deleted)
  std::string error;
  // The server refused the bind for good (IsRefusedForGood, but not a 404: the pod is gone).
  std::optional<kube::ApiError> refusal;
};

// One bind, retried after 5xx, 429 and transport failures. A 409 is settled by reading the pod:
// bound to `node` (the same pod, not being deleted) it is done — an earlier attempt landed.
BindAnswer BindOne(kube::Api& api, Clock& clock, const kube::RetryOptions& retry,
                   const std::string& ns, const Json& pod, const std::string& node) {
  const std::string name = NameOf(pod);
  kube::ApiResult<Json> bound = api.Bind(ns, name, node);
  for (int n = 1; !bound.ok() && n < retry.max_attempts &&
                  kube::ShouldRetry(kube::Idempotency::kIdempotent, bound.error());
       ++n) {
    clock.SleepFor(kube::BackoffDelay(retry, n, std::nullopt, 0.5));
    bound = api.Bind(ns, name, node);
  }
  if (bound.ok()) return {true, false, "", std::nullopt};
  std::string error = bound.error().ToString();
  // A 404 is the pod deleted meanwhile (placed again later), not a refusal.
  if (!bound.error().IsConflict()) {
    BindAnswer a{false, false, error, std::nullopt};
    if (IsRefusedForGood(bound.error()) && !bound.error().IsNotFound()) a.refusal = bound.error();
    return a;
  }
  kube::ApiResult<Json> now = api.Get(kube::resources::kPods, ns, name);
  if (!now.ok())
    return {false, false, error + " (reading the pod: " + now.error().ToString() + ")",
            std::nullopt};
  if (!SamePod(pod, *now)) return {false, false, error + " (the pod was replaced)", std::nullopt};
  if (NodeNameOf(*now) == node && !IsDeleting(*now)) return {true, false, "", std::nullopt};
  if (NodeNameOf(*now).empty()) return {false, false, error, std::nullopt};
  return {false, true,
          NodeNameOf(*now) == node ? "it is being deleted"
                                   : "it is bound to node " + NodeNameOf(*now) + " already",
          std::nullopt};
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

void Drop(std::vector<Json>& workers, const std::vector<std::string>& names) {
  std::erase_if(workers, [&](const Json& w) {
    return std::find(names.begin(), names.end(), NameOf(w)) != names.end();
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
                             std::vector<Json>& workers, const kube::RetryOptions& retry) {
  const std::string& ns = job.metadata.namespace_;
  for (const Json& w : workers) {
    if (IsDeleting(w)) {
      return GangOutcome{GangState::kWait, "worker " + NameOf(w) + " is being deleted", {}, {}};
    }
  }
  std::vector<Json*> before;  // bound already, as the cache shows them
  std::vector<Json*> unbound;
  std::vector<PodClaim> claims;  // of every worker, for Forget
  for (Json& w : workers) {
    claims.push_back(ClaimOf(w));
    (NodeNameOf(w).empty() ? unbound : before).push_back(&w);
  }
  if (unbound.empty()) return GangOutcome{};
  std::vector<PodClaim> todo;
  for (const Json* w : unbound) todo.push_back(ClaimOf(*w));
  Result<std::vector<Seat>> seats =
      ledger.PlaceAndAssume(ObjectKey(ns, job.metadata.name), job, todo);
  if (!seats.ok()) {
    GangOutcome out{GangState::kNoRoom, seats.status().message(), {}, {}};
    if (before.empty()) return out;
    ledger.Forget(claims);
    Result<std::vector<std::string>> released = Release(api, ns, before);
    if (!released.ok()) return released.status();
    out.released = std::move(*released);
    Drop(workers, out.released);
    return out;
  }
  bool binds = std::any_of(seats->begin(), seats->end(), [](const Seat& s) { return s.fresh; });
  std::vector<Json*> bound = before;  // every worker bound so far, by anyone
  for (size_t i = 0; i < unbound.size(); ++i) {
    if ((*seats)[i].fresh) continue;
    if (!binds) (*unbound[i])["spec"]["nodeName"] = (*seats)[i].node;  // the ledger knows it bound
    bound.push_back(unbound[i]);
  }
  if (!binds) return GangOutcome{};
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
                       {}};
  }
  for (size_t i = 0; i < unbound.size(); ++i) {
    const Seat& seat = (*seats)[i];
    if (!seat.fresh) continue;
    BindAnswer a = BindOne(api, clock, retry, ns, *unbound[i], seat.node);
    if (a.ok) {
      (*unbound[i])["spec"]["nodeName"] = seat.node;
      bound.push_back(unbound[i]);
      continue;
    }
    if (a.bound) bound.push_back(unbound[i]);
    ledger.Forget(claims);
    Result<std::vector<std::string>> released = Release(api, ns, bound);
    if (!released.ok()) return released.status();
    std::string why = "binding pod " + ns + "/" + NameOf(*unbound[i]) + " to node " + seat.node +
                      " failed: " + a.error + "; ";
    why += released->empty() ? "no worker was bound"
                             : "deleted the " + std::to_string(released->size()) +
                                   (released->size() == 1 ? " worker" : " workers") +
                                   " bound so far (" + Join(*released) + ")";
    GangOutcome out{GangState::kBindFailed, why + ", to place the job again", *released, {}};
    if (a.refusal) {
      out.refused =
          RefusalMessage("bind", "Pod", ns, NameOf(*unbound[i]), *a.refusal) + "; " +
          (released->empty() ? "no worker was bound" : "deleted the workers bound so far");
    }
    Drop(workers, out.released);
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
