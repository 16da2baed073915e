// dljob-operator end to end against dljob-test-apiserver, where only the test server can show it:
// a job waits for nodes that are not there yet, and its launcher is made only once every worker is
// Ready (pods driven through the server's /_test API, as a kubelet would move them). The rest of a
// job's life runs against both servers: shared_job_life_test.cc.
#include <gtest/gtest.h>

#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

std::vector<Json> WithRole(const std::vector<Json>& pods, const std::string& role) {
  std::vector<Json> out;
  for (const Json& p : pods) {
    if (Role(p) == role && !IsDeleting(p)) out.push_back(p);
  }
  return out;
}

// The job's live (not deleting) pods of `role`, once there are `n` of them.
std::optional<std::vector<Json>> WaitForPods(kube::Api& api, const std::string& job,
                                             const std::string& role, size_t n) {
  std::vector<Json> found;
  bool ok = WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api, job);
        if (!pods) return false;
        found = WithRole(*pods, role);
        return found.size() == n;
      },
      kWait);
  if (!ok) return std::nullopt;
  return found;
}

// The allocator the build links (operator/app/allocator.h) is the one the running operator uses,
// and its first log line says which: jemalloc with its background thread, unless built without.
TEST_F(OperatorE2eTest, TheOperatorNamesTheAllocatorItRunsWith) {
  StartCluster({.nodes = 0});
  OperatorProcess& op = StartOperator();
  std::string log;
  ASSERT_TRUE(WaitFor(
      [&] {
        log = op.Log();
        return log.find("memory from ") != std::string::npos;
      },
      kWait))
      << log;
  const std::string expected = DLJOB_OPERATOR_ALLOCATOR;
  if (expected == "jemalloc") {
    EXPECT_NE(log.find("memory from jemalloc "), std::string::npos) << log;
    EXPECT_NE(log.find("(background thread)"), std::string::npos) << log;
  } else {
    EXPECT_NE(log.find("memory from glibc malloc"), std::string::npos) << log;
  }
}

TEST_F(OperatorE2eTest, AJobWaitsForNodesAndGetsItsLauncherOnlyOnceEveryWorkerIsReady) {
  StartCluster({.nodes = 0});  // no GPUs yet: the job must wait
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("mnist", 2, 1)).ok());
  // Queued first as WaitingInQueue (its first pass may come before the queue's), then the queue
  // says why it waits.
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "mnist");
        return job && Phase(api(), "mnist") == "Queued" && PhaseReason(*job) == "Unschedulable";
      },
      kWait))
      << Describe(api(), "mnist");

  ASSERT_TRUE(control().AddNode("gpu-node-a", 8).ok());
  std::optional<std::vector<Json>> workers;
  ASSERT_TRUE(WaitFor(
      [&] {
        workers = WaitForPods(api(), "mnist", "worker", 2);
        return workers && NodeNameOf((*workers)[0]) == "gpu-node-a" &&
               NodeNameOf((*workers)[1]) == "gpu-node-a";
      },
      kWait))
      << Describe(api(), "mnist");
  EXPECT_TRUE(WaitForPhase(api(), "mnist", "Scheduled", kWait)) << Describe(api(), "mnist");
  // No launcher before every worker is Ready.
  EXPECT_TRUE(WithRole(PodsNow(api(), "mnist"), "launcher").empty());

  ASSERT_TRUE(MarkRunning(control(), *workers));
  // The launcher pod is created first and bound after: wait for the binding before reading it.
  std::optional<std::vector<Json>> launcher;
  ASSERT_TRUE(WaitFor(
      [&] {
        launcher = WaitForPods(api(), "mnist", "launcher", 1);
        return launcher && !NodeNameOf((*launcher)[0]).empty();
      },
      kWait))
      << Describe(api(), "mnist");
  EXPECT_EQ(NodeNameOf((*launcher)[0]), "gpu-node-a");
  ASSERT_TRUE(MarkRunning(control(), *launcher));
  ASSERT_TRUE(WaitForPhase(api(), "mnist", "Running", kWait)) << Describe(api(), "mnist");
}

}  // namespace
}  // namespace dljob::testing
