// Gang binding: the operator's own scheduler for its pods (schedulerName dljob-scheduler).
//
// BindGang places every worker of a job or, in the end, none: it asks the GpuLedger
// (gpu_ledger.h) for a place for every worker not yet bound — all of them, or none when they do
// not fit — then creates the workers that do not exist yet with spec.nodeName set (bound at
// birth, as a DaemonSet's pods are: no pods/binding call) and binds the ones that exist unbound
// (those made while the job waited for room, so that an autoscaler saw them) through
// pods/binding. The ledger reserves (assumes) the GPUs at placement, so two jobs placed at once
// never count the same free GPUs, and nothing is listed from the API server: the ledger is fed
// by informers. The rules that keep a half gang from ever holding GPUs:
//   - A create or bind that fails part-way (after its retries) undoes the gang: the workers
//     created or bound so far are deleted (they are the job's own pods; the reconciler makes them
//     again), the ledger forgets every assumption made for the gang, and the job is placed again
//     later.
//   - A gang found half bound (the operator stopped mid-way, or the deletions of an undo are not
//     in the cache yet) is completed only when the rest fits, and only after the server confirms
//     that every worker bound before still exists, bound, with the same uid (a worker the cache
//     shows bound may be gone already); when the rest does not fit, the bound ones are deleted.
//   - A worker being deleted makes the gang wait until it is gone (and made again); so does one
//     missing from the cache that the ledger has placed already (an earlier pass made it).
// A create or bind the server refuses for good (a 4xx other than 404, 409 and 429: RBAC,
// admission, a quota) also undoes the gang, and says so in GangOutcome::refused. Each create and
// bind is retried after a 5xx, a 429 or a transport failure (kube/retry.h's backoff): repeating
// one is safe, because a 409 is settled by reading the pod — this job's pod of this run, on the
// node we chose, counts as done (our earlier attempt landed). Anywhere else, it counts as a
// failure that undoes the gang: our view of that pod was wrong (a bind from an earlier pass that
// the ledger no longer remembers), so a placement computed on that view is not trusted, and the
// job is placed again once the informers have caught up. A pod of the job's previous run still
// holding a name makes the gang wait (kWait); a stranger's pod holding it is kNameConflict.
//
// MarkUnschedulable writes why a gang waits into its workers' PodScheduled condition (status
// False, reason Unschedulable) through the pods/status subresource, as kube-scheduler does for
// the pods it cannot place, so `kubectl describe pod` and cluster-autoscaler see it. Binding sets
// the condition to True on the server; a pod created bound gets it from its kubelet.
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
  kPlaced,        // every worker exists and is bound now
  kNoRoom,        // the gang does not fit; none of it is bound any more
  kBindFailed,    // a create or bind failed part-way; the workers bound so far were deleted
  kWait,          // a worker is going away, or the cache is behind the server: look again later
  kNameConflict,  // a pod that is not the job's holds a worker's name; nothing is bound
};

struct GangOutcome {
  GangState state = GangState::kPlaced;
  // kNoRoom: the placement's reason (for the Queued condition, the Event and the pods'
  // PodScheduled condition); kBindFailed: which create or bind failed, why, and what was undone;
  // kWait: why; kNameConflict: whose pod is in the way and what to do about it.
  std::string reason;
  std::vector<std::string> released;  // the names of the workers deleted to undo a partial gang
  // kBindFailed because the server refused a create or bind for good (children.h
  // IsRefusedForGood; a 404, the pod deleted meanwhile, is not): which request and the server's
  // answer. Placing the job again cannot help, so the reconciler fails it, with
  // `refused_reason` (kFailedCreateReason or "FailedBind").
  std::optional<std::string> refused;
  std::string refused_reason;
};

// A worker of the gang: a pod that exists (the cache's copy, or a create's answer) or, when
// `exists` is false, the pod to create (children.h DesiredWorker, without spec.nodeName).
struct GangWorker {
  Json pod;
  bool exists = true;
};

// The retries of one create or bind: 3 attempts, 100 ms then 200 ms apart (no jitter is drawn).
kube::RetryOptions DefaultBindRetry();

// `workers`: the job's workers of this incarnation, in index order. On kPlaced every one exists
// and is bound: those bound here get spec.nodeName set in place, those created here become the
// server's answer. Otherwise the workers that do not exist stay as they were, and those deleted
// to undo a partial gang are removed. Sleeps on `clock` between a request's attempts. Errors:
// API failures other than the creates' and binds' (a delete that undoes a gang, a read that
// confirms one); the ledger's assumptions for the gang are forgotten first.
Result<GangOutcome> BindGang(kube::Api& api, Clock& clock, GpuLedger& ledger, const DLJob& job,
                             std::vector<GangWorker>& workers,
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
