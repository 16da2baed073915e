// The operator itself on both servers (shared_fixture.h): two replicas with leader election never
// both lead and the standby takes over when the leader dies; an operator SIGKILLed at random
// points while jobs are submitted loses no job, restarts none, and leaves no stray or doubled pod;
// two gangs that would deadlock if bound pod at a time both complete; a job whose affinity no
// node matches waits and says why.
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "base/json_fields.h"
#include "http/testing/http_test_client.h"
#include "tests/operator/operator_kills.h"
#include "tests/operator/shared_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

// The dljob_operator_leader gauge of the operator serving /metrics on `port` (-1: no answer).
int LeaderGauge(int port) {
  http::testing::ClientResponse r = http::testing::Fetch(
      port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (r.status != 200) return -1;
  size_t at = r.body.find("\ndljob_operator_leader ");
  if (at == std::string::npos) return -1;
  return r.body[at + sizeof("\ndljob_operator_leader ") - 1] == '1' ? 1 : 0;
}

int BoundWorkers(kube::Api& api, const std::string& job) {
  int n = 0;
  for (const Json& p : Workers(api, job)) n += !NodeNameOf(p).empty();
  return n;
}

TEST_P(SharedE2eTest, TwoReplicasNeverBothLeadAndTheStandbyTakesOverWhenTheLeaderDies) {
  auto flags = [](const std::string& id) {
    return std::vector<std::string>{"--leader-elect=true", "--identity=" + id, "--lease-duration=6",
                                    "--renew-deadline=3", "--retry-period=1"};
  };
  std::map<std::string, OperatorProcess*> replicas = {
      {"replica-a", &StartOperator(flags("replica-a"))},
      {"replica-b", &StartOperator(flags("replica-b"))}};
  std::map<std::string, int> ports;
  for (auto& [id, op] : replicas) {
    ports[id] = op->MetricsPort();
    ASSERT_GT(ports[id], 0) << op->Log();
  }
  // Sample both replicas' leader gauges for the whole test: never both 1 in one round.
  std::atomic<int> both_leading{0}, rounds{0};
  Repeating sampler(
      [&] {
        int leaders =
            (LeaderGauge(ports["replica-a"]) == 1) + (LeaderGauge(ports["replica-b"]) == 1);
        if (leaders > 1) ++both_leading;
        ++rounds;
      },
      std::chrono::milliseconds(50));

  std::string leader;
  ASSERT_TRUE(WaitFor([&] { return replicas.count(leader = LeaseHolder(api())) > 0; }, wait()));
  std::string standby = leader == "replica-a" ? "replica-b" : "replica-a";
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("ha-1", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("ha-1", "Running")) << Describe(api(), "ha-1");
  std::map<std::string, std::string> uids;
  for (const Json& p : PodsNow(api(), "ha-1")) uids[NameOf(p)] = UidOf(p);
  ASSERT_EQ(uids.size(), 3u) << Describe(api(), "ha-1");
  EXPECT_EQ(LeaderGauge(ports[standby]), 0);
  EXPECT_EQ(replicas[standby]->Log().find("became the leader"), std::string::npos);

  replicas[leader]->Kill();
  ASSERT_EQ(replicas[leader]->Wait(10000), 128 + SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return LeaseHolder(api()) == standby; }, wait()))
      << "the lease is held by '" << LeaseHolder(api()) << "'";
  ASSERT_TRUE(WaitFor([&] { return LeaderGauge(ports[standby]) == 1; }, wait()));

  // The new leader picks the running job up as it is and runs new ones.
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("ha-2", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("ha-2", "Running")) << Describe(api(), "ha-2");
  std::map<std::string, std::string> uids_after;
  for (const Json& p : PodsNow(api(), "ha-1")) uids_after[NameOf(p)] = UidOf(p);
  EXPECT_EQ(uids_after, uids) << "the new leader recreated ha-1's pods";
  for (const char* job : {"ha-1", "ha-2"}) {
    ASSERT_TRUE(cluster().EndTraining(job, 0).ok());
    EXPECT_TRUE(WaitForPhase(job, "Succeeded")) << Describe(api(), job);
    EXPECT_EQ(Restarts(*GetJob(api(), job)), 0);
  }
  sampler.Stop();
  EXPECT_GT(rounds.load(), 0);
  EXPECT_EQ(both_leading.load(), 0) << "both replicas reported leading in the same round";
}

TEST_P(SharedE2eTest, AnOperatorKilledAtRandomPointsLosesNoJobAndLeavesNoStrayPod) {
  // As many 2-GPU jobs as the node holds: with cleanPodPolicy None a finished job's workers keep
  // their GPUs, so that every pod can be counted at the end.
  SubmitJobsWhileKillingTheOperator(cluster(),
                                    [&](const std::vector<std::string>& flags) -> OperatorProcess& {
                                      return StartOperator(flags);
                                    },
                                    {.jobs = cluster().gpus() / 2,
                                     .min_kills = 6,
                                     .submit_gap_ms = 400,
                                     .kill_gap_ms = 1500,
                                     .operator_flags = {}});
}

TEST_P(SharedE2eTest, TwoGangsThatWouldDeadlockPodAtATimeBothComplete) {
  // Two jobs of 2 workers × G/2 GPUs on one node of G: placed pod at a time, each could hold one
  // worker's GPUs and wait forever for the other's. Placed whole, one runs and the other waits
  // holding nothing, then runs.
  const int half = cluster().gpus() / 2;
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("gang-a", 2 * half, half)).ok());
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("gang-b", 2 * half, half)).ok());
  std::string first, second;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string a = Phase(api(), "gang-a"), b = Phase(api(), "gang-b");
        if (a == "Running" && b == "Queued") first = "gang-a", second = "gang-b";
        if (b == "Running" && a == "Queued") first = "gang-b", second = "gang-a";
        return !first.empty();
      },
      wait()))
      << Describe(api(), "gang-a") << "\n"
      << Describe(api(), "gang-b");
  ASSERT_TRUE(WaitFor([&] { return Workers(api(), second).size() == 2; }, wait()))
      << Describe(api(), second);
  EXPECT_EQ(BoundWorkers(api(), second), 0) << Describe(api(), second);
  EXPECT_EQ(BoundWorkers(api(), first), 2) << Describe(api(), first);
  EXPECT_FALSE(ConditionOf(*GetJob(api(), second), "Queued").value("message", "").empty());

  ASSERT_TRUE(cluster().EndTraining(first, 0).ok());
  ASSERT_TRUE(WaitForPhase(first, "Succeeded")) << Describe(api(), first);
  ASSERT_TRUE(WaitForPhase(second, "Running")) << Describe(api(), second);
  ASSERT_TRUE(cluster().EndTraining(second, 0).ok());
  ASSERT_TRUE(WaitForPhase(second, "Succeeded")) << Describe(api(), second);
  for (const std::string& job : {first, second}) EXPECT_EQ(Restarts(*GetJob(api(), job)), 0);
}

TEST_P(SharedE2eTest, AJobWhoseAffinityNoNodeMatchesWaitsAndSaysWhy) {
  StartOperator();
  Json job = NewJob("nowhere", 2, 1);
  job["spec"]["scheduling"]["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           Json::array(
               {{{"matchExpressions", Json::array({{{"key", "kubernetes.io/hostname"},
                                                    {"operator", "In"},
                                                    {"values", {"no-such-node"}}}})}}})}}}}}};
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), job).ok());
  std::string message;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> j = GetJob(api(), "nowhere");
        message = j ? ConditionOf(*j, "Queued").value("message", "") : "";
        return message.find("didn't match node affinity") != std::string::npos;
      },
      wait()))
      << Describe(api(), "nowhere") << "\nQueued: " << message;
  EXPECT_EQ(Phase(api(), "nowhere"), "Queued");
  EXPECT_EQ(BoundWorkers(api(), "nowhere"), 0) << Describe(api(), "nowhere");
  // The workers carry the affinity, as kube-scheduler would need it if it placed them.
  for (const Json& w : Workers(api(), "nowhere")) {
    EXPECT_EQ(FieldOf(FieldOf(w, "spec"), "affinity"), job["spec"]["scheduling"]["affinity"])
        << NameOf(w);
  }
}

}  // namespace
}  // namespace dljob::testing
