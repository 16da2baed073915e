// dljob-operator end to end against dljob-test-apiserver when things go wrong around it: an
// operator SIGKILLed at random points while 100 jobs are submitted, and API faults (dropped
// watches, 410 after compaction, 409, 5xx, 429). Two replicas with leader election run against
// both servers, and a few jobs with the operator killed at random points do too (the scenario is
// operator_kills.h): shared_operator_test.cc. Pods run by themselves (the server's simulated
// kubelet); the tests end launchers as the training would.
#include <gtest/gtest.h>

#include "tests/operator/e2e_fixture.h"
#include "tests/operator/operator_kills.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

std::string JobName(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s-%03d", prefix, i);
  return buf;
}

TEST_F(OperatorE2eTest, OperatorKilledAtRandomPointsDuringHundredSubmissionsLeavesNoStrayPods) {
  // 25 nodes of 8 GPUs: exactly the 200 GPUs the hundred 2-GPU jobs need.
  StartCluster({.nodes = 25, .gpus_per_node = 8, .kubelet_delay_ms = 0});
  SubmitJobsWhileKillingTheOperator(*cluster_,
                                    [&](const std::vector<std::string>& flags) -> OperatorProcess& {
                                      return StartOperator(flags);
                                    },
                                    {.jobs = 100,
                                     .min_kills = 10,
                                     .submit_gap_ms = 40,
                                     .kill_gap_ms = 900,
                                     .operator_flags = {"--qps=1000", "--burst=2000"}});
}

TEST_F(OperatorE2eTest, UnderInjectedFaultsEveryJobConvergesToTheRightStatus) {
  constexpr int kJobs = 12;
  StartCluster({.nodes = 4, .kubelet_delay_ms = 0});
  OperatorProcess& op = StartOperator();
  ASSERT_GT(op.MetricsPort(), 0) << op.Log();
  int batches = 0;
  auto inject = [&] {
    for (const Fault& f : std::vector<Fault>{
             {"POST", "/api/v1/namespaces/default/pods", 500, 2},  // creates and bindings
             {"PUT", "/apis/dljob.io/v1alpha1/namespaces/default/dljobs", 409, 2},  // status
             {"GET", "/api/v1", 503, 2},  // lists, watches, reads
             {"*", "/apis/dljob.io", 429, 1},
             {"POST", "/api/v1/namespaces/default/events", 500, 1},
         }) {
      EXPECT_TRUE(control().AddFault(f).ok());
    }
    ++batches;
  };
  // Every watch is cut and must re-open from a forgotten version (410: re-list), under faults.
  inject();
  ASSERT_TRUE(control().Compact().ok());
  ASSERT_TRUE(control().DropWatches().ok());
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob(JobName("fault", i), 2, 1)).ok());
  }
  // Even jobs' launchers succeed, odd ones' fail (backoffLimit 0: the job fails).
  auto exit_code = [](const std::string& job) { return std::stoi(job.substr(6)) % 2; };
  auto expected = [&](int i) { return i % 2 == 0 ? "Succeeded" : "Failed"; };

  int round = 0;
  int converging = kJobs;  // jobs not in their final phase yet, as the last round saw them
  std::string last;
  bool converged = WaitFor(
      [&] {
        ++round;
        // Every fifth round: dropped watches, sometimes after a compaction, and a new batch of
        // faults once most of the last one is used up (so they come steadily, never pile up),
        // while at least half of the jobs are still converging. The test's own reads use up part
        // of every batch, so with only a job or two left every retry of theirs would meet a
        // fault, each one doubling that job's backoff (5 ms x 2^failures) until its next retry
        // lies past this test's limit.
        if (round % 5 == 0) {
          Result<Json> info = control().Info();
          if (info.ok() && (*info).value("pendingFaults", 99) <= 2 && 2 * converging >= kJobs) {
            inject();
          }
          if (round % 10 == 0) {
            EXPECT_TRUE(control().Compact().ok());
          }
          EXPECT_TRUE(control().DropWatches().ok());
        }
        if (std::optional<std::vector<Json>> pods = JobPods(api(), "")) {
          EndRunningJobs(*cluster_, *pods, exit_code);
        }
        converging = 0;
        for (int i = 0; i < kJobs; ++i) {
          std::string phase = Phase(api(), JobName("fault", i));
          if (phase == expected(i)) continue;
          if (converging++ == 0) {
            last =
                JobName("fault", i) + " is " + phase + "; " + Describe(api(), JobName("fault", i));
          }
        }
        return converging == 0;
      },
      2 * kWait);
  ASSERT_TRUE(control().ClearFaults().ok());
  ASSERT_TRUE(converged) << last << " after " << round << " rounds, " << batches
                         << " batches of faults";
  EXPECT_NE(op.Log().find("injected fault"), std::string::npos)
      << "the operator never met a fault: the test proves nothing";
  for (int i = 0; i < kJobs; ++i) {
    Json job = *GetJob(api(), JobName("fault", i));
    EXPECT_EQ(Restarts(job), 0) << NameOf(job) << ": " << job["status"].dump();
    EXPECT_EQ(PhaseReason(job), i % 2 == 0 ? "Succeeded" : "BackoffLimitExceeded")
        << job["status"].dump();
  }
}

}  // namespace
}  // namespace dljob::testing
