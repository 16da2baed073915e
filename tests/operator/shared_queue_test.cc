// The queue on both servers (shared_fixture.h), on one node of G = cluster().gpus() GPUs: a job
// that can never fit stays Queued and says so while a smaller one runs; a job waiting for GPUs
// says why on itself, its pods and its Events and starts when they free; a higher-priority job
// preempts a running one, which is suspended, not restarted, and resumes; a queue's quota holds
// a job back although GPUs are free, and the DLQueue's status says so; an elastic job grows onto
// freed GPUs and shrinks for a higher-priority job.
#include <string>

#include <gtest/gtest.h>

#include "tests/operator/shared_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kDLQueues;

std::string QueuedMessage(const Json& job) {
  return ConditionOf(job, "Queued").value("message", "");
}

std::string N(int n) { return std::to_string(n); }

int64_t Int(const Json& job, const std::string& field) {
  return job.value("status", Json::object()).value(field, int64_t{0});
}

TEST_P(SharedE2eTest, AJobThatCanNeverFitStaysQueuedWithAReasonWhileOthersRun) {
  const int g = cluster().gpus();
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("huge", 2 * g, g)).ok());
  ASSERT_TRUE(WaitForPhase("huge", "Queued")) << Describe(api(), "huge");
  // A job that fits, submitted after, runs.
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("small", g / 2, g / 2)).ok());
  ASSERT_TRUE(WaitForPhase("small", "Running")) << Describe(api(), "small");
  // The queue's reason: what the job needs and what is free now (in the whole cluster) and, since
  // 2 workers of G GPUs exceed one node of G even when idle, that waiting will not help, with the
  // placement's account.
  const std::string needs = "needs " + N(2 * g) + " GPUs (any model, 2 workers × " + N(g) +
                            ") in queue default; " + N(cluster().cluster_gpus() - g / 2) + " free";
  std::string message;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "huge");
        message = job ? QueuedMessage(*job) : "";
        return message.rfind(needs, 0) == 0;
      },
      wait()))
      << message << "\n"
      << Describe(api(), "huge");
  EXPECT_NE(
      message.find("can never fit these nodes: needs 2 workers × " + N(g) + " GPUs, room for 1"),
      std::string::npos)
      << message;
  Json huge = *GetJob(api(), "huge");
  EXPECT_EQ(huge["status"].value("phase", ""), "Queued") << huge["status"].dump();
  EXPECT_EQ(PhaseReason(huge), "Unschedulable");
  EXPECT_EQ(Phase(api(), "small"), "Running");
  for (const Json& p : PodsNow(api(), "huge")) {
    EXPECT_EQ(NodeNameOf(p), "") << "pod " << NameOf(p)
                                 << " was bound though the gang does not fit";
  }
}

TEST_P(SharedE2eTest, AWaitingJobSaysWhyOnItselfAndItsPodsAndStartsWhenGpusFree) {
  const int g = cluster().gpus();
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("first", g, g)).ok());
  ASSERT_TRUE(WaitForPhase("first", "Running")) << Describe(api(), "first");
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("second", g, g)).ok());
  // Queued at once (WaitingInQueue), then Unschedulable with the reason once the queue has looked.
  ASSERT_TRUE(WaitFor(
      [&] {
        return PhaseReason(GetJob(api(), "second").value_or(Json::object())) == "Unschedulable";
      },
      wait()))
      << Describe(api(), "second");
  Json second = *GetJob(api(), "second");
  EXPECT_EQ(Phase(api(), "second"), "Queued");
  std::string why = QueuedMessage(second);
  EXPECT_NE(why.find("needs " + N(g) + " GPUs (any model) in queue default"), std::string::npos)
      << why;

  // The pod says the same, as kube-scheduler would have it say (kubectl describe pod).
  Json condition;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<Json> workers = Workers(api(), "second");
        if (workers.size() != 1) return false;
        condition = ConditionOf(workers[0], "PodScheduled");
        return condition.value("message", "") == why;
      },
      wait()))
      << condition.dump() << "\n"
      << Describe(api(), "second");
  EXPECT_EQ(condition.value("status", ""), "False");
  EXPECT_EQ(condition.value("reason", ""), "Unschedulable");
  std::vector<Json> events = EventsOf(api(), "second", "Unschedulable");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].value("message", ""), why);
  EXPECT_EQ(events[0].value("type", ""), "Warning");

  ASSERT_TRUE(cluster().EndTraining("first", 0).ok());
  ASSERT_TRUE(WaitForPhase("second", "Running")) << Describe(api(), "second");
  std::vector<Json> workers = Workers(api(), "second");
  ASSERT_EQ(workers.size(), 1u);
  condition = ConditionOf(workers[0], "PodScheduled");
  EXPECT_EQ(condition.value("status", ""), "True") << condition.dump();
  EXPECT_FALSE(condition.contains("message")) << condition.dump();
  ASSERT_TRUE(cluster().EndTraining("second", 0).ok());
  ASSERT_TRUE(WaitForPhase("second", "Succeeded")) << Describe(api(), "second");
}

TEST_P(SharedE2eTest, APreemptedJobIsSuspendedThenResumesAndSucceedsWithoutARestart) {
  const int g = cluster().gpus();
  StartOperator({"--min-run-time=0s"});
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("low", g, g)).ok());
  ASSERT_TRUE(WaitForPhase("low", "Running")) << Describe(api(), "low");

  Json high = NewJob("high", g, g);
  high["spec"]["scheduling"]["priority"] = 10;
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), high).ok());
  ASSERT_TRUE(WaitForPhase("high", "Running")) << Describe(api(), "high") << "\n"
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
  EXPECT_EQ(why.rfind("suspended for " + Ns() + "/high (priority 10 > 0)", 0), 0u) << why;

  ASSERT_TRUE(cluster().EndTraining("high", 0).ok());
  ASSERT_TRUE(WaitForPhase("high", "Succeeded")) << Describe(api(), "high");
  ASSERT_TRUE(WaitForPhase("low", "Running")) << Describe(api(), "low");
  low = *GetJob(api(), "low");
  EXPECT_EQ(PhaseReason(low), "Resumed");
  EXPECT_EQ(ConditionOf(low, "Preempted").value("reason", ""), "Resumed");
  EXPECT_EQ(EventsOf(api(), "low", "Resumed").size(), 1u);
  ASSERT_TRUE(cluster().EndTraining("low", 0).ok());
  ASSERT_TRUE(WaitForPhase("low", "Succeeded")) << Describe(api(), "low");
  low = *GetJob(api(), "low");
  EXPECT_EQ(Restarts(low), 0);
  EXPECT_EQ(Int(low, "preemptions"), 1);
}

TEST_P(SharedE2eTest, AQuotaHoldsAJobBackUntilQuotaFreesAndTheQueueSaysSo) {
  const int half = cluster().gpus() / 2;
  StartOperator();
  Json queue = {{"apiVersion", "dljob.io/v1alpha1"},
                {"kind", "DLQueue"},
                {"metadata", {{"name", "default"}}},
                {"spec", {{"quotas", {{{"nominal", half}, {"borrowingLimit", 0}}}}}}};
  ASSERT_TRUE(CreateClusterScoped(kDLQueues, queue).ok());
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("first", half, half)).ok());
  ASSERT_TRUE(WaitForPhase("first", "Running")) << Describe(api(), "first");
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("second", half, half)).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        return PhaseReason(GetJob(api(), "second").value_or(Json::object())) == "QuotaExceeded";
      },
      wait()))
      << Describe(api(), "second");
  const std::string why = QueuedMessage(*GetJob(api(), "second"));
  EXPECT_EQ(
      why.rfind("needs " + N(half) + " GPUs (any model) in queue default; quota " + N(half), 0), 0u)
      << why;
  // Room, but no quota.
  EXPECT_NE(why.find(N(cluster().cluster_gpus() - half) + " free"), std::string::npos) << why;

  Json status;
  ASSERT_TRUE(WaitFor(
      [&] {
        kube::ApiResult<Json> q = api().Get(kDLQueues, "", "default");
        if (!q.ok()) return false;
        status = q->value("status", Json::object());
        return status.value("pendingJobs", 0) == 1 && status.value("runningJobs", 0) == 1;
      },
      wait()))
      << status.dump();
  EXPECT_EQ(status["used"], Json::array({{{"gpus", half}}})) << status.dump();

  ASSERT_TRUE(cluster().EndTraining("first", 0).ok());
  ASSERT_TRUE(WaitForPhase("second", "Running")) << Describe(api(), "second");
  ASSERT_TRUE(cluster().EndTraining("second", 0).ok());
  ASSERT_TRUE(WaitForPhase("second", "Succeeded")) << Describe(api(), "second");
}

// An elastic job (1 or 2 workers of G/2 GPUs) starts on the half a rigid job leaves, grows onto
// it when that job ends, and gives it back (shrinks, not suspended) to a higher-priority job:
// each resize a whole-job restart at the new size, counted in status.resizes, never a restart
// or a preemption, and the job succeeds.
TEST_P(SharedE2eTest, AnElasticJobGrowsOntoFreedGpusAndShrinksForAHigherPriorityJob) {
  const int g = cluster().gpus();
  StartOperator({"--min-run-time=0s", "--elastic-grow-after=0s"});
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("first", g / 2, g / 2)).ok());
  ASSERT_TRUE(WaitForPhase("first", "Running")) << Describe(api(), "first");
  Json el = NewJob("el", g, g / 2);
  el["spec"]["elastic"] = {{"minGpus", g / 2}, {"maxGpus", g}};
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), el).ok());
  ASSERT_TRUE(WaitForPhase("el", "Running")) << Describe(api(), "el");
  auto workers = [&] {
    std::optional<Json> job = GetJob(api(), "el");
    return job ? job->value("/status/workers/desired"_json_pointer, int64_t{0}) : 0;
  };
  EXPECT_EQ(workers(), 1) << Describe(api(), "el");
  EXPECT_EQ(Workers(api(), "el").size(), 1u);

  ASSERT_TRUE(cluster().EndTraining("first", 0).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "el");
        return job && Int(*job, "resizes") == 1 && workers() == 2 &&
               Phase(api(), "el") == "Running";
      },
      wait()))
      << Describe(api(), "el");
  std::vector<Json> grew = EventsOf(api(), "el", "Resized");
  ASSERT_EQ(grew.size(), 1u);
  EXPECT_EQ(grew[0].value("message", "").rfind("grew 1 → 2 workers onto GPUs idle for ", 0), 0u)
      << grew[0].dump();

  Json high = NewJob("high", g / 2, g / 2);
  high["spec"]["scheduling"]["priority"] = 10;
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), high).ok());
  ASSERT_TRUE(WaitForPhase("high", "Running")) << Describe(api(), "high") << "\n"
                                               << Describe(api(), "el");
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "el");
        return job && Int(*job, "resizes") == 2 && workers() == 1 &&
               Phase(api(), "el") == "Running";
      },
      wait()))
      << Describe(api(), "el");
  Json shrunk = *GetJob(api(), "el");
  EXPECT_EQ(Int(shrunk, "preemptions"), 0);
  EXPECT_EQ(Restarts(shrunk), 0);
  EXPECT_NE(EventsOf(api(), "el", "Resized")
                .back()
                .value("message", "")
                .find("shrunk 2 → 1 workers for " + Ns() + "/high (priority 10 > 0)"),
            std::string::npos);

  ASSERT_TRUE(cluster().EndTraining("el", 0).ok());
  ASSERT_TRUE(WaitForPhase("el", "Succeeded")) << Describe(api(), "el");
  Json done = *GetJob(api(), "el");
  EXPECT_EQ(Restarts(done), 0);
  EXPECT_EQ(Int(done, "preemptions"), 0);
  EXPECT_EQ(Int(done, "resizes"), 2);
}

}  // namespace
}  // namespace dljob::testing
