// The "operator killed at random points" scenario, once for both of its tests: the shared case
// (shared_operator_test.cc, a few jobs on one node of either server) and the hundred-job one on
// dljob-test-apiserver (operator_resilience_test.cc).
//
// `jobs` DLJobs of 2 GPUs (2 workers × 1, cleanPodPolicy None, so every pod stays to be counted)
// are submitted at random gaps of up to `submit_gap_ms` while the operator is SIGKILLed and
// started again at random gaps of `kill_gap_ms` (plus a tenth of it), at least `min_kills` times;
// the jobs whose launcher runs are ended with 0 along the way. Then every job must succeed with
// restarts 0, and every pod must be owned by its job, bound, of incarnation 0, one launcher and
// two workers a job, with no node over cluster.gpus(). Failures are gtest failures of the caller.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tests/operator/e2e_cluster.h"

namespace dljob::testing {

struct OperatorKills {
  int jobs = 0;
  int min_kills = 0;
  int submit_gap_ms = 40;
  int kill_gap_ms = 1000;
  std::vector<std::string> operator_flags;
};

// `start` starts an operator the caller keeps (so its log is printed on failure).
using StartOperatorFn = std::function<OperatorProcess&(const std::vector<std::string>& flags)>;

void SubmitJobsWhileKillingTheOperator(E2eCluster& cluster, const StartOperatorFn& start,
                                       const OperatorKills& run);

}  // namespace dljob::testing
