// The operator itself on both servers (shared_fixture.h): two replicas with leader election never
// both lead and the standby takes over when the leader dies; an operator SIGKILLed at random
// points while jobs are submitted loses no job, restarts none, and leaves no stray or doubled pod;
// two gangs that would deadlock if bound pod at a time both complete; a job whose affinity no
// node matches waits and says why.
#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "http/testing/http_test_client.h"
#include "jobs/json_fields.h"
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

std::string LeaseHolder(kube::Api& api) {
  kube::ApiResult<Json> lease = api.Get(kube::resources::kLeases, Ns(), "dljob-operator");
  if (!lease.ok()) return "";
  return lease->value("spec", Json::object()).value("holderIdentity", "");
}

int BoundWorkers(kube::Api& api, const std::string& job) {
  int n = 0;
  for (const Json& p : Workers(api, job)) n += !NodeOf(p).empty();
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
  std::atomic<bool> sampling{true};
  std::atomic<int> both_leading{0}, rounds{0};
  std::thread sampler([&] {
    while (sampling) {
      int leaders = (LeaderGauge(ports["replica-a"]) == 1) + (LeaderGauge(ports["replica-b"]) == 1);
      if (leaders > 1) ++both_leading;
      ++rounds;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  struct StopSampler {
    std::atomic<bool>& sampling;
    std::thread& t;
    ~StopSampler() {
      sampling = false;
      t.join();
    }
  } stop_sampler{sampling, sampler};

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
  sampling = false;
  EXPECT_GT(rounds.load(), 0);
  EXPECT_EQ(both_leading.load(), 0) << "both replicas reported leading in the same round";
}

// GPUs requested by the live pods bound to each node.
std::map<std::string, int> GpusInUse(const std::vector<Json>& pods) {
  std::map<std::string, int> used;
  for (const Json& p : pods) {
    if (NodeOf(p).empty() || PodPhase(p) == "Succeeded" || PodPhase(p) == "Failed") continue;
    for (const Json& c : FieldOf(FieldOf(p, "spec"), "containers")) {
      const Json& g = FieldOf(FieldOf(FieldOf(c, "resources"), "limits"), "nvidia.com/gpu");
      used[NodeOf(p)] += g.is_number()   ? g.get<int>()
                         : g.is_string() ? std::stoi(g.get<std::string>())
                                         : 0;
    }
  }
  return used;
}

// The controller ownerReference's uid ("" when none).
std::string OwnerUid(const Json& object) {
  const Json& refs = FieldOf(FieldOf(object, "metadata"), "ownerReferences");
  for (const Json& r : refs.is_array() ? refs : Json::array()) {
    if (r.value("controller", false)) return StringAt(r, "uid");
  }
  return "";
}

// Ends the training of every job whose launcher runs now (and is not being deleted).
void EndRunningJobs(E2eCluster& cluster, const std::vector<Json>& pods) {
  for (const Json& p : pods) {
    if (Role(p) != "launcher" || PodPhase(p) != "Running" || IsDeleting(p)) continue;
    (void)cluster.EndTraining(
        StringAt(FieldOf(FieldOf(p, "metadata"), "labels"), "dljob.io/job-name"), 0);
  }
}

TEST_P(SharedE2eTest, AnOperatorKilledAtRandomPointsLosesNoJobAndLeavesNoStrayPod) {
  // As many 2-GPU jobs as the node holds: with cleanPodPolicy None a finished job's workers keep
  // their GPUs, so that every pod can be counted at the end.
  const int jobs = cluster().gpus() / 2;
  OperatorProcess* op = &StartOperator();
  std::atomic<int> submitted{0}, refused{0};
  std::thread submitter([&] {
    std::mt19937 rng(7);
    for (int i = 0; i < jobs; ++i) {
      Json job = NewJob("crash-" + std::to_string(i), 2, 1);
      job["spec"]["runPolicy"]["cleanPodPolicy"] = "None";  // every pod stays to be checked
      if (!api().Create(kDLJobs, Ns(), job).ok()) ++refused;
      ++submitted;
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 400));
    }
  });
  std::mt19937 rng(20261126);
  int kills = 0;
  while (submitted < jobs || kills < 6) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 1500));
    op->Kill();
    op->Wait(10000);
    ++kills;
    op = &StartOperator();
    if (std::optional<std::vector<Json>> pods = JobPods(api(), "")) {
      for (const auto& [node, gpus] : GpusInUse(*pods)) {
        EXPECT_LE(gpus, cluster().gpus()) << "node " << node << " is overcommitted";
      }
      if (kills % 2 == 0) EndRunningJobs(cluster(), *pods);
    }
  }
  submitter.join();
  ASSERT_EQ(refused.load(), 0);

  int succeeded = 0;
  std::string behind;  // the jobs not Succeeded yet, described
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "");
        if (!pods) return false;
        EndRunningJobs(cluster(), *pods);
        kube::ApiResult<Json> all = kube::ListAll(api(), kDLJobs, Ns());
        if (!all.ok()) return false;
        succeeded = 0;
        behind.clear();
        for (const Json& j : (*all)["items"]) {
          bool done = Phase(api(), NameOf(j)) == "Succeeded";
          succeeded += done;
          if (!done) behind += "\n" + Describe(api(), NameOf(j));
        }
        return succeeded == jobs;
      },
      2 * wait()))
      << succeeded << " of " << jobs << " jobs succeeded after " << kills << " kills:" << behind;

  kube::ApiResult<Json> all = kube::ListAll(api(), kDLJobs, Ns());
  ASSERT_TRUE(all.ok());
  std::map<std::string, std::string> job_uids;  // uid -> name
  for (const Json& j : (*all)["items"]) {
    job_uids[UidOf(j)] = NameOf(j);
    EXPECT_EQ(Restarts(j), 0) << NameOf(j) << " restarted: " << j["status"].dump();
  }
  std::vector<Json> pods = PodsNow(api(), "");
  std::map<std::string, std::map<std::string, int>> per_job;  // job -> role -> count
  for (const Json& p : pods) {
    auto owner = job_uids.find(OwnerUid(p));
    ASSERT_NE(owner, job_uids.end()) << "orphaned pod " << NameOf(p);
    EXPECT_FALSE(NodeOf(p).empty()) << NameOf(p) << " was never bound";
    EXPECT_EQ(Incarnation(p), 0) << NameOf(p);
    ++per_job[owner->second][Role(p)];
  }
  EXPECT_EQ(per_job.size(), static_cast<size_t>(jobs));
  for (const auto& [job, roles] : per_job) {
    EXPECT_EQ(roles, (std::map<std::string, int>{{"launcher", 1}, {"worker", 2}})) << job;
  }
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
