// dljob-operator end to end with its queue: a higher-priority job preempts a running one, which is
// suspended (not restarted) and resumes and succeeds once room is back; a queue's quota holds a
// job back although GPUs are free, the job and the DLQueue's status say so, and the job starts
// when quota frees.
#include <gtest/gtest.h>

#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kDLQueues;

bool WaitForPhase(kube::Api& api, const std::string& job, const std::string& phase) {
  return WaitFor([&] { return Phase(api, job) == phase; }, kWait);
}

Json WithPriority(Json job, int priority) {
  job["spec"]["scheduling"]["priority"] = priority;
  return job;
}

int64_t Int(const Json& job, const std::string& field) {
  return job.value("status", Json::object()).value(field, int64_t{0});
}

TEST_F(OperatorE2eTest, APreemptedJobIsSuspendedThenResumesAndSucceedsWithoutARestart) {
  StartCluster({.nodes = 1, .gpus_per_node = 8, .kubelet_delay_ms = 0});
  StartOperator({"--min-run-time=0s"});
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("low", 8, 8)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "low", "Running")) << Describe(api(), "low");

  ASSERT_TRUE(api().Create(kDLJobs, kNs, WithPriority(NewJob("high", 8, 8), 10)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "high", "Running")) << Describe(api(), "high") << "\n"
                                                      << Describe(api(), "low");
  Json low = *GetJob(api(), "low");
  EXPECT_EQ(Phase(api(), "low"), "Queued") << Describe(api(), "low");
  EXPECT_EQ(Int(low, "preemptions"), 1);
  EXPECT_EQ(Restarts(low), 0);
  EXPECT_EQ(ConditionOf(low, "Preempted").value("status", ""), "True");
  std::vector<Json> preempted = EventsOf(api(), "low", "Preempted");
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0].value("type", ""), "Warning");
  const std::string why = preempted[0].value("message", "");
  EXPECT_EQ(why.rfind("suspended for default/high (priority 10 > 0)", 0), 0u) << why;

  ASSERT_TRUE(Finish(control(), "high-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "high", "Succeeded")) << Describe(api(), "high");
  ASSERT_TRUE(WaitForPhase(api(), "low", "Running")) << Describe(api(), "low");
  low = *GetJob(api(), "low");
  EXPECT_EQ(PhaseReason(low), "Resumed");
  EXPECT_EQ(ConditionOf(low, "Preempted").value("reason", ""), "Resumed");
  EXPECT_EQ(EventsOf(api(), "low", "Resumed").size(), 1u);
  ASSERT_TRUE(Finish(control(), "low-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "low", "Succeeded")) << Describe(api(), "low");
  low = *GetJob(api(), "low");
  EXPECT_EQ(Restarts(low), 0);
  EXPECT_EQ(Int(low, "preemptions"), 1);
}

TEST_F(OperatorE2eTest, AQuotaHoldsAJobBackUntilQuotaFreesAndTheQueueSaysSo) {
  StartCluster({.nodes = 2, .gpus_per_node = 8, .kubelet_delay_ms = 0});
  StartOperator();
  Json queue = {{"apiVersion", "dljob.io/v1alpha1"},
                {"kind", "DLQueue"},
                {"metadata", {{"name", "default"}}},
                {"spec", {{"quotas", {{{"nominal", 8}, {"borrowingLimit", 0}}}}}}};
  ASSERT_TRUE(api().Create(kDLQueues, "", queue).ok());
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("first", 8, 8)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "first", "Running")) << Describe(api(), "first");
  ASSERT_TRUE(api().Create(kDLJobs, kNs, NewJob("second", 8, 8)).ok());
  ASSERT_TRUE(
      WaitFor([&] { return PhaseReason(*GetJob(api(), "second")) == "QuotaExceeded"; }, kWait))
      << Describe(api(), "second");
  const std::string why = ConditionOf(*GetJob(api(), "second"), "Queued").value("message", "");
  EXPECT_EQ(why.rfind("needs 8 GPUs (any model) in queue default; quota 8", 0), 0u) << why;
  EXPECT_NE(why.find("8 free"), std::string::npos) << why;  // room, but no quota

  Json status;
  ASSERT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<Json> q = api().Get(kDLQueues, "", "default");
        if (!q.ok()) return false;
        status = q->value("status", Json::object());
        return status.value("pendingJobs", 0) == 1 && status.value("runningJobs", 0) == 1;
      },
      kWait))
      << status.dump();
  EXPECT_EQ(status["used"], Json::array({{{"gpus", 8}}})) << status.dump();

  ASSERT_TRUE(Finish(control(), "first-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "second", "Running")) << Describe(api(), "second");
  ASSERT_TRUE(Finish(control(), "second-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "second", "Succeeded")) << Describe(api(), "second");
}

}  // namespace
}  // namespace dljob::testing
