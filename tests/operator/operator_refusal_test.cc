// dljob-operator end to end when the API server says no: a child it refuses for good (422) fails
// the job once, with the server's answer in the condition and a Warning Event, instead of a retry
// loop; a job whose children cannot be made yet (503) shows a phase from its first pass and runs
// once the server recovers. Faults are injected through the test API server's /_test/faults.
#include <gtest/gtest.h>

#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

std::string PhaseMessage(const Json& job) {
  return ConditionOf(job, job.value("status", Json::object()).value("phase", ""))
      .value("message", "");
}

TEST_F(OperatorE2eTest, AChildTheServerRefusesForGoodFailsTheJobOnceWithTheServersReason) {
  StartCluster({.nodes = 1});
  // Three refusals: a retry loop would use them all up and then make the Service.
  const int kFaults = 3;
  ASSERT_TRUE(control()
                  .AddFault({"POST", "/api/v1/namespaces/default/services", 422, kFaults},
                            "Service \"refused-worker\" is invalid: spec: a webhook said no")
                  .ok());
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("refused", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "refused", "Failed", kWait)) << Describe(api(), "refused");
  Json job = *GetJob(api(), "refused");
  EXPECT_EQ(PhaseReason(job), "FailedCreate");
  std::string message = PhaseMessage(job);
  EXPECT_NE(message.find("refused to create Service default/refused-worker (422 Invalid): "
                         "Service \"refused-worker\" is invalid: spec: a webhook said no"),
            std::string::npos)
      << message;
  std::vector<Json> events;
  ASSERT_TRUE(WaitFor(
      [&] {
        events = EventsOf(api(), "refused", "FailedCreate");
        return !events.empty();
      },
      kWait));
  EXPECT_EQ(events[0].value("type", ""), "Warning");
  EXPECT_EQ(events[0].value("message", ""), message);
  EXPECT_TRUE(PodsNow(api(), "refused").empty());
  // The operator sent the request once (a second pass on a cache that has not seen the Failed
  // status yet may send it once more), so the fault rule is not used up.
  Result<Json> info = control().Info();
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->value("pendingFaults", 0), 1) << info->dump();
}

TEST_F(OperatorE2eTest, AJobShowsAPhaseFromItsFirstPassAndRunsOnceTheServerRecovers) {
  StartCluster({.nodes = 1});
  ASSERT_TRUE(
      control().AddFault({"POST", "/api/v1/namespaces/default/services", 503, 100000}).ok());
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("patient", 2, 1)).ok());
  ASSERT_TRUE(WaitForPhase(api(), "patient", "Queued", kWait)) << Describe(api(), "patient");
  Json job = *GetJob(api(), "patient");
  EXPECT_EQ(PhaseReason(job), "Created");
  EXPECT_NE(PhaseMessage(job).find(
                "the last attempt failed, retrying: creating Service default/patient-worker: 503"),
            std::string::npos)
      << PhaseMessage(job);
  EXPECT_TRUE(PodsNow(api(), "patient").empty());

  ASSERT_TRUE(control().ClearFaults().ok());  // the server recovers: the job goes on
  ASSERT_TRUE(WaitForPhase(api(), "patient", "Scheduled", kWait)) << Describe(api(), "patient");
  EXPECT_EQ(Workers(api(), "patient").size(), 2u);
}

}  // namespace
}  // namespace dljob::testing
