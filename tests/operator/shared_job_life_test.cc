// One job's life as a user sees it, on both servers (shared_fixture.h): it runs to Succeeded with
// its throughput and its archived log (served only to whom may get pods/log), its launcher
// reaching the workers by address; a failed worker restarts the whole job until the backoff limit
// fails it; a deleted worker restarts it and it still succeeds; suspend and resume; a spec change
// applied by a restart; clean-up after ttlSecondsAfterFinished.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "http/testing/http_test_client.h"
#include "tests/operator/log_readers.h"
#include "tests/operator/shared_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kPods;

// The job's live (not deleting) pods of `role`.
std::vector<Json> Live(kube::Api& api, const std::string& job, const std::string& role) {
  std::vector<Json> out;
  for (const Json& p : PodsNow(api, job)) {
    if (Role(p) == role && !IsDeleting(p)) out.push_back(p);
  }
  return out;
}

std::set<std::string> Uids(kube::Api& api, const std::string& job) {
  std::set<std::string> uids;
  for (const Json& p : PodsNow(api, job)) uids.insert(UidOf(p));
  return uids;
}

TEST_P(SharedE2eTest, AJobRunsToSucceededWithItsThroughputAndArchivedLogWithoutClusterDns) {
  OperatorProcess& op = StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("mnist", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("mnist", "Running")) << Describe(api(), "mnist");

  // The launcher reaches each worker by its address (hostAliases for the hostfile's name and the
  // short one), with or without cluster DNS; no training pod mounts a service-account token.
  std::vector<Json> launcher = Live(api(), "mnist", "launcher");
  ASSERT_EQ(launcher.size(), 1u) << Describe(api(), "mnist");
  const Json& launcher_spec = launcher[0]["spec"];
  std::map<std::string, std::string> alias_ip;  // short name → address
  for (const Json& a : launcher_spec.value("hostAliases", Json::array())) {
    alias_ip[a["hostnames"][1].get<std::string>()] = a["ip"].get<std::string>();
    EXPECT_EQ(a["hostnames"][0], a["hostnames"][1].get<std::string>() + ".mnist-worker." + Ns() +
                                     ".svc.cluster.local");
  }
  std::vector<Json> workers = Live(api(), "mnist", "worker");
  ASSERT_EQ(workers.size(), 2u);
  for (const Json& w : workers) {
    std::string ip = w["status"].value("podIP", "");
    EXPECT_FALSE(ip.empty()) << NameOf(w);
    EXPECT_EQ(alias_ip[NameOf(w)], ip) << launcher_spec.dump();
    EXPECT_EQ(w["spec"].value("automountServiceAccountToken", true), false);
  }
  EXPECT_EQ(launcher_spec.value("automountServiceAccountToken", true), false);

  ASSERT_TRUE(cluster().Say("mnist", 0, "epoch 1 starting").ok());
  ASSERT_TRUE(cluster().Say("mnist", 0, MetricReport(0, 10, 1500, 2)).ok());
  ASSERT_TRUE(cluster().Say("mnist", 1, MetricReport(1, 10, 1480, 2)).ok());
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
      wait()))
      << throughput.dump() << "\n"
      << Describe(api(), "mnist");
  EXPECT_DOUBLE_EQ(throughput.value("perGpuImagesPerSec", 0.0), (1500 + 1480) / 2.0);

  // The last line before the ranks exit, as dljob-train ends: its accuracy is in the status by
  // the time the job is Succeeded (the operator reads the launcher's log to its end first).
  ASSERT_TRUE(
      cluster().Say("mnist", 0, R"(DLJOB_METRIC {"step":20,"accuracy":0.8125,"rank":0})").ok());
  ASSERT_TRUE(cluster().EndTraining("mnist", 0).ok());
  ASSERT_TRUE(WaitForPhase("mnist", "Succeeded")) << Describe(api(), "mnist");
  Json job = *GetJob(api(), "mnist");
  EXPECT_EQ(job["status"]["throughput"].value("step", 0), 20) << job["status"].dump();
  EXPECT_DOUBLE_EQ(job["status"]["throughput"].value("accuracy", 0.0), 0.8125);
  // Scheduled and Running were, and are no more; Queued only if the job ever waited (it need
  // not, with the node's GPUs free when the operator first looks).
  for (const char* done : {"Scheduled", "Running"}) {
    EXPECT_EQ(ConditionOf(job, done).value("status", ""), "False") << done;
  }
  EXPECT_NE(ConditionOf(job, "Queued").value("status", ""), "True");
  EXPECT_EQ(ConditionOf(job, "Succeeded").value("status", ""), "True");
  EXPECT_FALSE(job["status"].value("completionTime", "").empty());
  EXPECT_EQ(Restarts(job), 0);

  // The archived log, served only to whom may get pods/log in the job's namespace (the server
  // decides: a TokenReview, then a SubjectAccessReview).
  Result<std::string> reader = cluster().ServiceAccountToken("log-reader");
  Result<std::string> stranger = cluster().ServiceAccountToken("no-logs");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ASSERT_TRUE(stranger.ok()) << stranger.status().message();
  ASSERT_TRUE(GrantPodLogs(api(), Ns(), "log-reader").ok());
  int port = op.MetricsPort();
  ASSERT_GT(port, 0) << op.Log();
  http::testing::ClientResponse logs;
  ASSERT_TRUE(WaitFor(
      [&] {
        logs = FetchLogs(port, Ns(), "mnist", *reader);
        return logs.status == 200 && logs.body.find("DLJOB_METRIC") != std::string::npos &&
               logs.body.find("epoch 1 starting") != std::string::npos;
      },
      wait()))
      << logs.status << " " << logs.body;
  EXPECT_NE(logs.body.find("[rank 0] epoch 1 starting"), std::string::npos) << logs.body;
  EXPECT_EQ(FetchLogs(port, Ns(), "mnist", "").status, 401);
  EXPECT_EQ(FetchLogs(port, Ns(), "mnist", "not-a-token").status, 401);
  http::testing::ClientResponse refused = FetchLogs(port, Ns(), "mnist", *stranger);
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("User \"system:serviceaccount:" + Ns() +
                              ":no-logs\" cannot get resource \"pods/log\" in namespace \"" + Ns() +
                              "\""),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(FetchLogs(port, Ns(), "mnist", *reader, "X-Dljob-Authorization").status, 200);
}

TEST_P(SharedE2eTest, AFailedWorkerRestartsTheWholeJobUntilTheBackoffLimitFailsIt) {
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("flaky", 2, 1, /*backoff_limit=*/1)).ok());
  ASSERT_TRUE(WaitForPhase("flaky", "Running")) << Describe(api(), "flaky");
  std::set<std::string> first_uids = Uids(api(), "flaky");
  ASSERT_EQ(first_uids.size(), 3u) << Describe(api(), "flaky");

  ASSERT_TRUE(cluster().FailWorker("flaky", 1).ok());
  // The whole job comes back: every pod new, of incarnation 1.
  ASSERT_TRUE(WaitFor([&] { return RestartedWhole(api(), "flaky", first_uids, 1, 3); }, wait()))
      << Describe(api(), "flaky");

  ASSERT_TRUE(cluster().FailWorker("flaky", 0).ok());
  ASSERT_TRUE(WaitForPhase("flaky", "Failed")) << Describe(api(), "flaky");
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
      wait()))
      << Describe(api(), "flaky");
}

TEST_P(SharedE2eTest, ADeletedWorkerRestartsTheWholeJobWhichThenSucceeds) {
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("lost", 2, 1, /*backoff_limit=*/1)).ok());
  ASSERT_TRUE(WaitForPhase("lost", "Running")) << Describe(api(), "lost");
  std::set<std::string> first_uids = Uids(api(), "lost");
  ASSERT_EQ(first_uids.size(), 3u) << Describe(api(), "lost");

  ASSERT_TRUE(api().Delete(kPods, Ns(), "lost-worker-1").ok());
  ASSERT_TRUE(WaitFor([&] { return RestartedWhole(api(), "lost", first_uids, 1, 3); }, wait()))
      << Describe(api(), "lost");
  std::vector<Json> lost = EventsOf(api(), "lost", "WorkerLost");
  ASSERT_EQ(lost.size(), 1u) << Describe(api(), "lost");
  EXPECT_EQ(lost[0].value("type", ""), "Warning");
  // A deleted pod first stays, Terminating, while its kubelet stops it; the operator may see it so
  // or only once it is gone, depending on when it looks.
  const std::string why = lost[0].value("message", "");
  const std::string restarting = "; restarting the whole job (restart 1 of 1)";
  EXPECT_TRUE(why == "worker lost-worker-1 is being deleted" + restarting ||
              why ==
                  "worker lost-worker-1 disappeared (deleted, evicted through the API, or its "
                  "node was removed)" +
                      restarting)
      << why;

  ASSERT_TRUE(cluster().EndTraining("lost", 0).ok());
  ASSERT_TRUE(WaitForPhase("lost", "Succeeded")) << Describe(api(), "lost");
  EXPECT_EQ(Restarts(*GetJob(api(), "lost")), 1);
}

TEST_P(SharedE2eTest, SuspendDeletesThePodsAndResumeBringsThemBack) {
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("pausable", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("pausable", "Running")) << Describe(api(), "pausable");

  Json suspend = {{"spec", {{"runPolicy", {{"suspend", true}}}}}};
  ASSERT_TRUE(api().MergePatch(kDLJobs, Ns(), "pausable", suspend).ok());
  ASSERT_TRUE(WaitForPhase("pausable", "Suspended")) << Describe(api(), "pausable");
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "pausable");
        return pods && pods->empty();
      },
      wait()))
      << Describe(api(), "pausable");
  EXPECT_EQ(Restarts(*GetJob(api(), "pausable")), 0);

  Json resume = {{"spec", {{"runPolicy", {{"suspend", false}}}}}};
  ASSERT_TRUE(api().MergePatch(kDLJobs, Ns(), "pausable", resume).ok());
  ASSERT_TRUE(WaitForPhase("pausable", "Running")) << Describe(api(), "pausable");
  ASSERT_TRUE(WaitFor([&] { return Live(api(), "pausable", "worker").size() == 2; }, wait()))
      << Describe(api(), "pausable");
  ASSERT_TRUE(cluster().EndTraining("pausable", 0).ok());
  ASSERT_TRUE(WaitForPhase("pausable", "Succeeded")) << Describe(api(), "pausable");
  EXPECT_EQ(Restarts(*GetJob(api(), "pausable")), 0);
}

TEST_P(SharedE2eTest, AChangedSpecIsAppliedByRestartingTheWholeJobWithIt) {
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("edited", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("edited", "Running")) << Describe(api(), "edited");
  const std::set<std::string> first = Uids(api(), "edited");

  Json edit = {{"spec", {{"env", Json::array({{{"name", "LR"}, {"value", "0.05"}}})}}}};
  ASSERT_TRUE(api().MergePatch(kDLJobs, Ns(), "edited", edit).ok());
  auto has_new_env = [](const Json& pod) {
    for (const Json& e : pod["spec"]["containers"][0].value("env", Json::array())) {
      if (e.value("name", "") == "LR" && e.value("value", "") == "0.05") return true;
    }
    return false;
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<Json> workers = Live(api(), "edited", "worker");
        return Phase(api(), "edited") == "Running" && workers.size() == 2 &&
               std::all_of(workers.begin(), workers.end(), has_new_env);
      },
      wait()))
      << Describe(api(), "edited");
  for (const Json& w : Live(api(), "edited", "worker")) EXPECT_FALSE(first.count(UidOf(w)));
  Json status = GetJob(api(), "edited")->value("status", Json::object());
  EXPECT_EQ(status.value("specRestarts", 0), 1);
  EXPECT_EQ(Restarts(*GetJob(api(), "edited")), 0);
  EXPECT_EQ(status.value("observedGeneration", 0),
            (*GetJob(api(), "edited"))["metadata"].value("generation", 0));

  ASSERT_TRUE(cluster().EndTraining("edited", 0).ok());
  ASSERT_TRUE(WaitForPhase("edited", "Succeeded")) << Describe(api(), "edited");
}

TEST_P(SharedE2eTest, AFinishedJobIsDeletedWithItsChildrenAfterItsTtl) {
  StartOperator();
  Json spec = NewJob("short", 2, 1);
  spec["spec"]["runPolicy"]["ttlSecondsAfterFinished"] = 1;
  spec["spec"]["runPolicy"]["cleanPodPolicy"] = "None";  // the pods then go with the job only
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), spec).ok());
  ASSERT_TRUE(WaitForPhase("short", "Running")) << Describe(api(), "short");
  ASSERT_TRUE(cluster().EndTraining("short", 0).ok());

  ASSERT_TRUE(WaitFor([&] { return Phase(api(), "short") == "<absent>"; }, wait()))
      << Describe(api(), "short");
  EXPECT_TRUE(Absent(api(), kDLJobs, Ns(), "short"));
  EXPECT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "short");
        return pods && pods->empty() &&
               Absent(api(), kube::resources::kServices, Ns(), "short-worker") &&
               Absent(api(), kube::resources::kConfigMaps, Ns(), "short-config") &&
               Absent(api(), kube::resources::kSecrets, Ns(), "short-ssh");
      },
      wait()))
      << Describe(api(), "short");
}

}  // namespace
}  // namespace dljob::testing
