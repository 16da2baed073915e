// dljob-operator end to end against dljob-test-apiserver: one job's life as a user sees it —
// phases, throughput, the archived log, restarts and the backoff limit, suspend/resume, TTL clean
// up, and a job that does not fit. Pods are driven through the server's /_test API (or its
// simulated kubelet) as a kubelet would move them.
#include <cmath>
#include <map>
#include <set>

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

bool WaitForPhase(kube::Api& api, const std::string& job, const std::string& phase) {
  return WaitFor([&] { return Phase(api, job) == phase; }, kWait);
}

std::string ConditionStatus(const Json& job, const std::string& type) {
  for (const Json& c : job["status"].value("conditions", Json::array())) {
    if (c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

std::string ConditionMessage(const Json& job, const std::string& type) {
  for (const Json& c : job.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == type) return c.value("message", "");
  }
  return "";
}

TEST_F(OperatorE2eTest, JobGoesQueuedThenRunningThenSucceededWithThroughputAndArchivedLog) {
  StartCluster({.nodes = 0});  // no GPUs yet: the job must wait
  OperatorProcess& op = StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("mnist", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "mnist", "Queued")) << Describe(api(), "mnist");
  EXPECT_EQ(PhaseReason(*GetJob(api(), "mnist")), "Unschedulable");

  ASSERT_TRUE(control().AddNode("gpu-node-a", 8).ok());
  std::optional<std::vector<Json>> workers = WaitForPods(api(), "mnist", "worker", 2);
  ASSERT_TRUE(workers) << Describe(api(), "mnist");
  ASSERT_TRUE(WaitFor(
      [&] {
        workers = WaitForPods(api(), "mnist", "worker", 2);
        return workers && NodeOf((*workers)[0]) == "gpu-node-a" &&
               NodeOf((*workers)[1]) == "gpu-node-a";
      },
      kWait))
      << Describe(api(), "mnist");
  EXPECT_TRUE(WaitForPhase(api(), "mnist", "Scheduled")) << Describe(api(), "mnist");
  // No launcher before every worker is Ready.
  EXPECT_TRUE(WithRole(PodsNow(api(), "mnist"), "launcher").empty());

  ASSERT_TRUE(MarkRunning(control(), *workers));
  // The launcher pod is created first and bound after: wait for the binding before reading it.
  std::optional<std::vector<Json>> launcher;
  ASSERT_TRUE(WaitFor(
      [&] {
        launcher = WaitForPods(api(), "mnist", "launcher", 1);
        return launcher && !NodeOf((*launcher)[0]).empty();
      },
      kWait))
      << Describe(api(), "mnist");
  EXPECT_EQ(NodeOf((*launcher)[0]), "gpu-node-a");
  // The launcher reaches each worker by its address (hostAliases for the hostfile's name and the
  // short one), with or without cluster DNS; no training pod mounts a service-account token.
  const Json& launcher_spec = (*launcher)[0]["spec"];
  std::map<std::string, std::string> alias_ip;  // short name → address
  for (const Json& a : launcher_spec.value("hostAliases", Json::array())) {
    alias_ip[a["hostnames"][1].get<std::string>()] = a["ip"].get<std::string>();
    EXPECT_EQ(a["hostnames"][0],
              a["hostnames"][1].get<std::string>() + ".mnist-worker.default.svc.cluster.local");
  }
  std::vector<Json> running = Workers(api(), "mnist");
  ASSERT_EQ(running.size(), 2u);
  for (const Json& w : running) {
    std::string ip = w["status"].value("podIP", "");
    EXPECT_FALSE(ip.empty()) << NameOf(w);
    EXPECT_EQ(alias_ip[NameOf(w)], ip) << launcher_spec.dump();
    EXPECT_EQ(w["spec"].value("automountServiceAccountToken", true), false);
  }
  EXPECT_EQ(launcher_spec.value("automountServiceAccountToken", true), false);
  ASSERT_TRUE(MarkRunning(control(), *launcher));
  ASSERT_TRUE(WaitForPhase(api(), "mnist", "Running")) << Describe(api(), "mnist");

  ASSERT_TRUE(control()
                  .AppendLog(kNs, "mnist-launcher",
                             "[1,0]<stdout>:epoch 1 starting\n" + MetricLine(0, 10, 1500, 2) +
                                 MetricLine(1, 10, 1480, 2))
                  .ok());
  Json throughput;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "mnist");
        if (!job) return false;
        throughput = job->value("status", Json::object()).value("throughput", Json::object());
        // Both ranks' figures summed (until rank 1's line is folded in, rank 0's is scaled up).
        return throughput.value("step", 0) == 10 &&
               std::abs(throughput.value("imagesPerSec", 0.0) - (1500 + 1480)) < 0.01;
      },
      kWait))
      << Describe(api(), "mnist");
  EXPECT_DOUBLE_EQ(throughput.value("perGpuImagesPerSec", 0.0), (1500 + 1480) / 2.0);

  ASSERT_TRUE(Finish(control(), "mnist-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "mnist", "Succeeded")) << Describe(api(), "mnist");
  Json job = *GetJob(api(), "mnist");
  EXPECT_EQ(ConditionStatus(job, "Queued"), "False");
  EXPECT_EQ(ConditionStatus(job, "Scheduled"), "False");
  EXPECT_EQ(ConditionStatus(job, "Running"), "False");
  EXPECT_EQ(ConditionStatus(job, "Succeeded"), "True");
  EXPECT_FALSE(job["status"].value("completionTime", "").empty());
  EXPECT_DOUBLE_EQ(job["status"]["throughput"].value("imagesPerSec", 0.0), 2980);
  EXPECT_EQ(Restarts(job), 0);

  int port = op.MetricsPort();
  ASSERT_GT(port, 0) << op.Log();
  http::testing::ClientResponse logs;
  ASSERT_TRUE(WaitFor(
      [&] {
        logs = Get(port, "/logs/default/mnist");
        return logs.status == 200 && logs.body.find("DLJOB_METRIC") != std::string::npos &&
               logs.body.find("epoch 1 starting") != std::string::npos;
      },
      kWait))
      << logs.status << " " << logs.body;
  EXPECT_NE(logs.body.find("[rank 0] epoch 1 starting"), std::string::npos) << logs.body;
}

TEST_F(OperatorE2eTest, FailedWorkerRestartsTheWholeJobUntilTheBackoffLimitFailsIt) {
  StartCluster({.nodes = 1, .kubelet_delay_ms = 0});
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("flaky", 2, 1, /*backoff_limit=*/1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "flaky", "Running")) << Describe(api(), "flaky");
  std::set<std::string> first_uids;
  for (const Json& p : PodsNow(api(), "flaky")) first_uids.insert(UidOf(p));
  ASSERT_EQ(first_uids.size(), 3u) << Describe(api(), "flaky");

  ASSERT_TRUE(Finish(control(), "flaky-worker-1", 1).ok());
  // The whole job comes back: every pod new, of incarnation 1.
  ASSERT_TRUE(WaitFor([&] { return RestartedWhole(api(), "flaky", first_uids, 1, 3); }, kWait))
      << Describe(api(), "flaky");

  ASSERT_TRUE(Finish(control(), "flaky-worker-0", 1).ok());
  ASSERT_TRUE(WaitForPhase(api(), "flaky", "Failed")) << Describe(api(), "flaky");
  Json job = *GetJob(api(), "flaky");
  EXPECT_EQ(PhaseReason(job), "BackoffLimitExceeded");
  EXPECT_EQ(Restarts(job), 1);
  // cleanPodPolicy Running (the default): the pods still running are stopped.
  EXPECT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "flaky");
        if (!pods) return false;
        for (const Json& p : *pods) {
          if (PodPhase(p) == "Running") return false;
        }
        return true;
      },
      kWait))
      << Describe(api(), "flaky");
}

TEST_F(OperatorE2eTest, SuspendDeletesThePodsAndResumeBringsThemBack) {
  StartCluster({.nodes = 1, .kubelet_delay_ms = 0});
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("pausable", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "pausable", "Running")) << Describe(api(), "pausable");

  Json suspend = {{"spec", {{"runPolicy", {{"suspend", true}}}}}};
  ASSERT_TRUE(api().MergePatch(kDLJobs, kNs, "pausable", suspend).ok());
  ASSERT_TRUE(WaitForPhase(api(), "pausable", "Suspended")) << Describe(api(), "pausable");
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "pausable");
        return pods && pods->empty();
      },
      kWait))
      << Describe(api(), "pausable");
  EXPECT_EQ(Restarts(*GetJob(api(), "pausable")), 0);

  Json resume = {{"spec", {{"runPolicy", {{"suspend", false}}}}}};
  ASSERT_TRUE(api().MergePatch(kDLJobs, kNs, "pausable", resume).ok());
  ASSERT_TRUE(WaitForPhase(api(), "pausable", "Running")) << Describe(api(), "pausable");
  ASSERT_TRUE(WaitForPods(api(), "pausable", "worker", 2)) << Describe(api(), "pausable");
  ASSERT_TRUE(Finish(control(), "pausable-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "pausable", "Succeeded")) << Describe(api(), "pausable");
  EXPECT_EQ(Restarts(*GetJob(api(), "pausable")), 0);
}

TEST_F(OperatorE2eTest, FinishedJobIsDeletedWithItsChildrenAfterItsTtl) {
  StartCluster({.nodes = 1, .kubelet_delay_ms = 0});
  StartOperator();
  Json spec = NewJob("short", 2, 1);
  spec["spec"]["runPolicy"]["ttlSecondsAfterFinished"] = 1;
  spec["spec"]["runPolicy"]["cleanPodPolicy"] = "None";  // the pods then go with the job only
  ASSERT_TRUE(api().Create(kDLJobs, kNs, spec).ok());
  ASSERT_TRUE(WaitForPhase(api(), "short", "Running")) << Describe(api(), "short");
  ASSERT_TRUE(Finish(control(), "short-launcher", 0).ok());

  ASSERT_TRUE(WaitFor([&] { return Phase(api(), "short") == "<absent>"; }, kWait))
      << Describe(api(), "short");
  EXPECT_TRUE(api().Get(kDLJobs, kNs, "short").error().IsNotFound());
  EXPECT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "short");
        return pods && pods->empty() &&
               api().Get(kube::resources::kServices, kNs, "short-worker").error().IsNotFound() &&
               api().Get(kube::resources::kConfigMaps, kNs, "short-config").error().IsNotFound() &&
               api().Get(kube::resources::kSecrets, kNs, "short-ssh").error().IsNotFound();
      },
      kWait))
      << Describe(api(), "short");
}

TEST_F(OperatorE2eTest, JobThatDoesNotFitStaysQueuedWithAReasonWhileOthersRun) {
  StartCluster({.nodes = 2, .gpus_per_node = 8, .kubelet_delay_ms = 0});
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("huge", 32, 8)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "huge", "Queued")) << Describe(api(), "huge");
  // A job that fits, submitted after, runs: the operator has looked at the cluster since.
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("small", 8, 8)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "small", "Running")) << Describe(api(), "small");
  // Still too few GPUs (24), but the operator looks again: wait until it has (its reason then
  // counts the new node) before reading the verdict.
  ASSERT_TRUE(control().AddNode("gpu-node-extra", 8).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "huge");
        return job &&
               ConditionMessage(*job, "Queued").find("/3 nodes are available") != std::string::npos;
      },
      kWait))
      << Describe(api(), "huge");
  EXPECT_EQ(Phase(api(), "small"), "Running");

  Json huge = *GetJob(api(), "huge");
  EXPECT_EQ(huge["status"].value("phase", ""), "Queued") << huge["status"].dump();
  EXPECT_EQ(PhaseReason(huge), "Unschedulable");
  std::string message;
  for (const Json& c : huge["status"]["conditions"]) {
    if (c.value("type", "") == "Queued") message = c.value("message", "");
  }
  // The queue's reason: what the job needs and what is free now, and, since 32 GPUs exceed the
  // 24 the three nodes have even when idle, that waiting will not help, with the placement's
  // account of the room on the idle nodes.
  EXPECT_EQ(message.rfind("needs 32 GPUs (any model, 4 workers × 8) in queue default; 16 free", 0),
            0u)
      << message;
  EXPECT_NE(message.find("can never fit these nodes: needs 4 workers × 8 GPUs, room for 3"),
            std::string::npos)
      << message;
  for (const Json& p : PodsNow(api(), "huge")) {
    EXPECT_EQ(NodeOf(p), "") << "pod " << NameOf(p) << " was bound though the gang does not fit";
  }
}

}  // namespace
}  // namespace dljob::testing
