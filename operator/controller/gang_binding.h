// Gang binding: the operator's own scheduler for its pods (schedulerName dljob-scheduler).
//
// BindGang binds every worker of a job or, in the end, none: it asks the GpuLedger
// (gpu_ledger.h) for a place for every still-unbound worker — all of them, or none when they do
// not fit — and binds them through pods/binding. The ledger reserves (assumes) the GPUs at
// placement, so two jobs placed at once never count the same free GPUs, and nothing is listed
// from the API server: the ledger is fed by informers. The rules that keep a half gang from ever
// holding GPUs:
//   - A bind that fails part-way (after its retries) undoes the gang: the workers bound so far
//     are deleted (they are the job's own pods; the reconciler recreates them unbound), the
//     ledger forgets every assumption made for the gang, and the job is placed again later.
//   - A gang found half bound (the operator stopped mid-way, or the deletions of an undo are not
//     in the cache yet) is completed only when the rest fits, and only after the server confirms
//     that every worker bound before still exists, bound, with the same uid (a worker the cache
//     shows bound may be gone already); when the rest does not fit, the bound ones are deleted.
//   - A worker being deleted makes the gang wait until it is gone (and recreated).
// A bind the server refuses for good (a 4xx other than 404, 409 and 429: RBAC, admission) also
// undoes the gang, and says so in GangOutcome::refused. Each bind is retried after a 5xx, a 429 or
// a transport failure (kube/retry.h's backoff): a repeated bind is safe, because a 409 Conflict is
// settled by reading the pod — bound to the node we chose, with the uid we bound, it counts as done
// (our earlier attempt landed). Bound to another node, it counts as a failure that undoes the gang:
// our view of that pod was wrong (a bind from an earlier pass that the ledger no longer remembers),
// so a placement computed on that view is not trusted, and the job is placed again once the
// informers have caught up.
//
// MarkUnschedulable writes why a gang waits into its workers' PodScheduled condition (status
// False, reason Unschedulable) through the pods/status subresource, as kube-scheduler does for
// the pods it cannot place, so `kubectl describe pod` and cluster-autoscaler see it. Binding sets
// the condition to True on the server.
//
// Thread-safe as the Api, the Clock and the ledger are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/dljob_types.h"
#include "kube/api.h"
#include "kube/retry.h"
#include "operator/controller/gpu_ledger.h"

namespace dljob::controller {

enum class GangState {
  kPlaced,      // every worker is bound now
  kNoRoom,      // the gang does not fit; none of it is bound any more
  kBindFailed,  // a bind failed part-way; the workers bound so far were deleted
  kWait,        // a worker is going away, or the cache is behind the server: look again later
};

struct GangOutcome {
  GangState state = GangState::kPlaced;
  // kNoRoom: the placement's reason (for the Queued condition, the Event and the pods'
  // PodScheduled condition); kBindFailed: which bind failed, why, and what was undone; kWait: why.
  std::string reason;
  std::vector<std::string> released;  // the names of the workers deleted to undo a partial gang
  // kBindFailed because the server refused a bind for good (children.h IsRefusedForGood; a 404,
  // the pod deleted meanwhile, is not): which bind and the server's answer. Placing the job
  // again cannot help, so the reconciler fails it.
  std::optional<std::string> refused;
};

// The retries of one bind: 3 attempts, 100 ms then 200 ms apart (no jitter is drawn).
kube::RetryOptions DefaultBindRetry();

// `workers` are the job's current worker pods (this incarnation's, in index order): those bound
// here get spec.nodeName set in place, those deleted to undo a partial gang are removed. Sleeps
// on `clock` between a bind's attempts. Errors: API failures other than the bind's (a delete
// that undoes a gang, a read that confirms one); the ledger's assumptions for the gang are
// forgotten first.
Result<GangOutcome> BindGang(kube::Api& api, Clock& clock, GpuLedger& ledger, const DLJob& job,
                             std::vector<nlohmann::json>& workers,
                             const kube::RetryOptions& retry = DefaultBindRetry());

// The pods/status merge patch that sets PodScheduled=False, reason Unschedulable, with `message`
// (the other conditions kept; lastTransitionTime `now` when the status changes); nullopt when the
// pod is bound or says exactly that already. Pure.
std::optional<nlohmann::json> UnschedulablePatch(const nlohmann::json& pod,
                                                 const std::string& message,
                                                 const std::string& now);
// Patches every unbound worker of `workers` whose condition differs, and applies the patch to
// `workers` too. Best effort, like Events: a failed patch is left for the next pass.
void MarkUnschedulable(kube::Api& api, const std::string& ns, std::vector<nlohmann::json>& workers,
                       const std::string& message, const std::string& now);

}  // namespace dljob::controller
