// Gang binding: the operator's own scheduler for its pods (schedulerName dljob-scheduler).
//
// BindGang asks the GpuLedger (gpu_ledger.h) for a place for every still-unbound worker of a job
// — all of them, or none when they do not fit — and binds the ones it placed through pods/binding.
// The ledger reserves (assumes) the GPUs at placement, so two jobs bound at once never count the
// same free GPUs, and nothing is listed from the API server: the ledger is fed by informers. A
// bind that fails gives the reservations of the pods not yet bound back to the ledger. A worker
// the ledger already knows as bound (the pod cache is behind) just gets its node.
// Thread-safe as the Api and the ledger are.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "kube/api.h"
#include "operator/controller/gpu_ledger.h"

namespace dljob::controller {

struct GangOutcome {
  bool placed = false;  // every worker is bound now
  std::string reason;   // when not placed: why, for the job's Queued condition
};

// `workers` are the job's current worker pods; those bound here get spec.nodeName set in place.
Result<GangOutcome> BindGang(kube::Api& api, GpuLedger& ledger, const DLJob& job,
                             std::vector<nlohmann::json>& workers);

}  // namespace dljob::controller
