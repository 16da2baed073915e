// The PodDisruptionBudget of the operator's own pods, kept by the operator itself at the policy
// version the server serves (policy/v1, or policy/v1beta1 before Kubernetes 1.21), so that one
// plain manifest installs on every version the operator supports. A static manifest cannot do
// that: policy/v1 is missing before 1.21 and policy/v1beta1 is gone from 1.25.
//
// The budget is named after the operator's Deployment, selects that Deployment's pods (its
// spec.selector) and is owned by it (an ownerReference, no blockOwnerDeletion), so deleting the
// Deployment, by `helm uninstall` or `kubectl delete -f`, lets the garbage collector delete the
// budget too. A Deployment of fewer than two replicas gets none: minAvailable 1 of one pod would
// refuse every drain of its node; a budget this operator made before is then deleted.
//
// EnsureSelfBudget() does a few API calls (get the Deployment, get the budget, then create,
// replace or delete it) and returns; another replica writing the same budget at once is retried
// (409 → read again). Errors name the object and the API's answer. Thread-compatible (call from
// one thread, when a replica starts to lead).
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "kube/api.h"

namespace dljob::op {

struct SelfBudgetOptions {
  std::string namespace_;     // the operator's: its Deployment's and the budget's
  std::string deployment;     // the operator's Deployment; the budget's name
  std::string min_available;  // "1", or a percentage "50%"
};

// "" when `value` is a minAvailable this supports (a count ≥ 1, or 1–100%), else why not.
std::string MinAvailableError(const std::string& value);

// The budget `deployment` should have at `version` (a kube::resources PodDisruptionBudget), or
// nullopt when it should have none (spec.replicas < 2). `min_available` is valid
// (MinAvailableError is "").
std::optional<kube::Json> SelfBudget(const kube::Json& deployment, const kube::Resource& version,
                                     const std::string& min_available);

Status EnsureSelfBudget(kube::Api& api, const SelfBudgetOptions& options,
                        const kube::Resource& version);

}  // namespace dljob::op
