// Faults of the cluster under a running job, on both servers (shared_fixture.h): the streams of
// the launcher's log cut as a kubelet restart cuts them — the job keeps training and Succeeds
// without a restart, its status current throughout, each log line archived and counted once; and
// a node lost under a running job (SharedMultiNodeTest) — the whole job restarts once on the node
// that remains, evented, never a partial gang, and Succeeds.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/operator/log_readers.h"
#include "tests/operator/shared_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

int64_t StepOf(kube::Api& api, const std::string& job) {
  std::optional<Json> j = GetJob(api, job);
  if (!j) return -1;
  return j->value("status", Json::object()).value("throughput", Json::object()).value("step", -1);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_P(SharedE2eTest, ALauncherLogCutUnderARunningJobIsFollowedAgainWithoutCountingALineTwice) {
  OperatorProcess& op = StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("cut", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("cut", "Running")) << Describe(api(), "cut");
  ASSERT_TRUE(cluster().Say("cut", 0, "before the cut").ok());
  ASSERT_TRUE(cluster().Say("cut", 0, MetricReport(0, 10, 1500, 2)).ok());
  ASSERT_TRUE(WaitFor([&] { return StepOf(api(), "cut") == 10; }, wait()))
      << Describe(api(), "cut");

  ASSERT_TRUE(cluster().CutLauncherLog("cut").ok());
  // Training goes on past the cut, and the status follows it.
  ASSERT_TRUE(cluster().Say("cut", 0, "after the cut").ok());
  ASSERT_TRUE(cluster().Say("cut", 0, MetricReport(0, 20, 1500, 2)).ok());
  ASSERT_TRUE(WaitFor([&] { return StepOf(api(), "cut") == 20; }, wait()))
      << "step " << StepOf(api(), "cut") << "\n"
      << op.Log() << Describe(api(), "cut");
  ASSERT_TRUE(
      cluster().Say("cut", 0, R"(DLJOB_METRIC {"step":30,"accuracy":0.875,"rank":0})").ok());
  ASSERT_TRUE(cluster().EndTraining("cut", 0).ok());
  ASSERT_TRUE(WaitForPhase("cut", "Succeeded")) << Describe(api(), "cut");
  Json job = *GetJob(api(), "cut");
  EXPECT_EQ(job["status"]["throughput"].value("step", 0), 30) << job["status"].dump();
  EXPECT_DOUBLE_EQ(job["status"]["throughput"].value("accuracy", 0.0), 0.875);
  EXPECT_EQ(Restarts(job), 0);
  EXPECT_EQ(job["status"].value("specRestarts", 0), 0);
  // The operator said what happened to the stream.
  EXPECT_NE(op.Log().find("the log stream ended while the launcher runs"), std::string::npos)
      << op.Log();

  // The archived log holds every line once: what was read before the cut is not read again.
  Result<std::string> reader = cluster().ServiceAccountToken("log-reader");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ASSERT_TRUE(GrantPodLogs(api(), Ns(), "log-reader").ok());
  http::testing::ClientResponse logs;
  ASSERT_TRUE(WaitFor(
      [&] {
        logs = FetchLogs(op.MetricsPort(), Ns(), "cut", *reader);
        return logs.status == 200 && logs.body.find("\"step\":30") != std::string::npos;
      },
      wait()))
      << logs.status << " " << logs.body;
  EXPECT_EQ(Count(logs.body, "[rank 0] before the cut"), 1u) << logs.body;
  EXPECT_EQ(Count(logs.body, "[rank 0] after the cut"), 1u) << logs.body;
  EXPECT_EQ(Count(logs.body, "\"step\":10"), 1u) << logs.body;
  EXPECT_EQ(Count(logs.body, "\"step\":20"), 1u) << logs.body;
}

TEST_P(SharedE2eTest, TheApiServerAndEtcdRestartedUnderARunningJobLeaveItTrainingToSucceeded) {
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("cp", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase("cp", "Running")) << Describe(api(), "cp");
  const std::set<std::string> pods = [&] {
    std::set<std::string> uids;
    for (const Json& p : PodsNow(api(), "cp")) uids.insert(UidOf(p));
    return uids;
  }();
  int step = 0;
  for (const char* part : {"kube-apiserver", "etcd"}) {
    step += 10;
    ASSERT_TRUE(cluster().Say("cp", 0, MetricReport(0, step, 1500, 2)).ok());
    ASSERT_TRUE(WaitFor([&] { return StepOf(api(), "cp") == step; }, wait()))
        << part << " " << Describe(api(), "cp");
    Status restarted = cluster().RestartControlPlane(part);
    ASSERT_TRUE(restarted.ok()) << restarted.message();
  }
  // The status follows the training on.
  ASSERT_TRUE(cluster().Say("cp", 0, MetricReport(0, 30, 1500, 2)).ok());
  ASSERT_TRUE(WaitFor([&] { return StepOf(api(), "cp") == 30; }, wait())) << Describe(api(), "cp");
  ASSERT_TRUE(cluster().EndTraining("cp", 0).ok());
  ASSERT_TRUE(WaitForPhase("cp", "Succeeded")) << Describe(api(), "cp");
  Json job = *GetJob(api(), "cp");
  EXPECT_EQ(Restarts(job), 0);
  EXPECT_EQ(job["status"]["throughput"].value("step", 0), 30);
  // No pod made again: every one left (the workers go with cleanPodPolicy Running) is one of
  // the first run's.
  for (const Json& p : PodsNow(api(), "cp")) EXPECT_EQ(pods.count(UidOf(p)), 1u) << NameOf(p);
}

TEST_P(SharedMultiNodeTest, ANodeLostUnderARunningJobRestartsItWholeOnTheNodeThatRemains) {
  StartOperator({"--node-lost-after=3"});
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("lost", 4, 2)).ok());
  ASSERT_TRUE(WaitForPhase("lost", "Running")) << Describe(api(), "lost");
  std::vector<Json> workers = Workers(api(), "lost");
  ASSERT_EQ(workers.size(), 2u);
  const std::string node = NodeNameOf(workers[0]);
  ASSERT_TRUE(cluster().Say("lost", 0, MetricReport(0, 10, 1500, 2)).ok());
  ASSERT_TRUE(WaitFor([&] { return StepOf(api(), "lost") == 10; }, wait()));

  ASSERT_TRUE(cluster().StopKubelet(node).ok());
  // The whole job restarts, once, on the node that remains: no pod of it on the lost node (they
  // went with grace 0, no kubelet being there to confirm), every one on another.
  bool moved = WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "lost");
        if (!job || job->value("status", Json::object()).value("disruptionRestarts", 0) != 1 ||
            Phase(api(), "lost") != "Running") {
          return false;
        }
        std::vector<Json> pods = PodsNow(api(), "lost");
        return pods.size() == 3 && std::none_of(pods.begin(), pods.end(), [&](const Json& p) {
                 return NodeNameOf(p) == node || NodeNameOf(p).empty();
               });
      },
      wait());
  Status started = cluster().StartKubelet(node);
  ASSERT_TRUE(moved) << Describe(api(), "lost");
  ASSERT_TRUE(started.ok()) << started.message();
  std::vector<Json> lost = EventsOf(api(), "lost", "NodeLost");
  ASSERT_EQ(lost.size(), 1u) << Describe(api(), "lost");
  EXPECT_EQ(lost[0].value("type", ""), "Warning");
  EXPECT_NE(lost[0].value("message", "").find("node " + node + " has not been Ready"),
            std::string::npos)
      << lost[0].dump();

  ASSERT_TRUE(cluster().EndTraining("lost", 0).ok());
  ASSERT_TRUE(WaitForPhase("lost", "Succeeded")) << Describe(api(), "lost");
  Json job = *GetJob(api(), "lost");
  EXPECT_EQ(Restarts(job), 0);  // a lost node spends nothing of backoffLimit
  EXPECT_EQ(job["status"].value("disruptionRestarts", 0), 1);
}

}  // namespace
}  // namespace dljob::testing
