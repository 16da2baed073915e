// Faults of the cluster under a running job, on both servers (shared_fixture.h): the streams of
// the launcher's log cut as a kubelet restart cuts them. The job keeps training and Succeeds
// without a restart, its status current throughout, each log line archived and counted once.
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
  ASSERT_TRUE(WaitFor([&] { return StepOf(api(), "cut") == 10; }, wait())) << Describe(api(), "cut");

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

}  // namespace
}  // namespace dljob::testing
