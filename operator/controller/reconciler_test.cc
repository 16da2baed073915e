#include "operator/controller/reconciler.h"

#include "operator/controller/testing/reconciler_test_util.h"

namespace dljob::controller::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kNodes;
using kube::resources::kPods;
using kube::resources::kServices;
using Strings = std::vector<std::string>;

class ReconcilerTest : public ReconcilerWorld {
 protected:
  void SetUp() override { api_.Put(kNodes, GpuNode("n1", 8)); }

  // New job → children and bound workers; then every worker Ready → launcher; then running.
  void RunJob(Json run_policy = Json::object()) {
    PutJob(run_policy);
    Reconcile();
    SetPod("j-worker-0", "Running");
    SetPod("j-worker-1", "Running");
    Reconcile();
    SetPod("j-launcher", "Running");
    Reconcile();
    ASSERT_EQ(JobStatus()["phase"], "Running");
  }
};

TEST_F(ReconcilerTest, NewJobGetsItsChildrenAndBoundWorkersButNoLauncher) {
  PutJob();
  ReconcileResult r = Reconcile();
  // Placed first, then created bound: no pods/binding call.
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "update-status dljobs ns/j",
                              "create events WorkersBound", "create poddisruptionbudgets ns/j"}));
  DLJob job = Job();
  EXPECT_EQ(Body("create services ns/j-worker"), NewWorkerService(job));
  EXPECT_EQ(Body("create configmaps ns/j-config"), NewConfigMap(job, options_.build));
  EXPECT_EQ(Body("create secrets ns/j-ssh"), NewSshSecret(job, FixedKeys("").value().private_key,
                                                          FixedKeys("").value().authorized_key));
  EXPECT_EQ(Body("create pods ns/j-worker-1"), ExpectedWorker(1, 0, "n1"));
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Scheduled");
  EXPECT_EQ(status["workers"], (Json{{"desired", 2}, {"ready", 0}, {"failed", 0}}));
  EXPECT_EQ(status["placement"], (Json::array({{{"node", "n1"}, {"gpus", 4}}})));
  EXPECT_EQ(status["startTime"], "2026-01-02T03:04:05Z");
  EXPECT_FALSE(r.requeue_after);
}

TEST_F(ReconcilerTest, NothingChangedMeansNoWrites) {
  PutJob();
  Reconcile();
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
}

TEST_F(ReconcilerTest, LauncherComesOnlyWhenEveryWorkerIsReady) {
  PutJob();
  Reconcile();
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running", /*ready=*/false);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j"}));  // 1/2 ready, same reason
  SetPod("j-worker-1", "Running");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-launcher", "update-status dljobs ns/j",
                              "create events WorkersReady"}));
  EXPECT_EQ(Body("create pods ns/j-launcher"), ExpectedLauncher());
  EXPECT_EQ(Body("create pods ns/j-launcher")["spec"]["hostAliases"][1]["ip"], "10.0.0.3");
  SetPod("j-launcher", "Running");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events Running"}));
  EXPECT_EQ(JobStatus()["workers"]["ready"], 2);
}

TEST_F(ReconcilerTest, TheLauncherWaitsForEveryWorkersAddress) {
  PutJob();
  Reconcile();
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running", /*ready=*/true, 0, /*with_ip=*/false);  // the cache is behind
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events WorkersReady"}));
  SetPod("j-worker-1", "Running");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-launcher"}));
  Json aliases = Body("create pods ns/j-launcher")["spec"]["hostAliases"];
  EXPECT_EQ(aliases, ExpectedLauncher()["spec"]["hostAliases"]);
  EXPECT_EQ(aliases[0],
            (Json{{"ip", "10.0.0.2"},
                  {"hostnames", {"j-worker-0.j-worker.ns.svc.cluster.local", "j-worker-0"}}}));
}

TEST_F(ReconcilerTest, AChildTheServerRefusesFailsTheJobWithoutRetrying) {
  PutJob();
  faults_.FailFor("create", "j-worker",
                  {422, "Invalid",
                   "Service \"j-worker\" is invalid: metadata.name: Invalid value: a DNS-1035 "
                   "label must start with an alphabetic character"});
  ReconcileResult r = Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "update-status dljobs ns/j",
                              "create events FailedCreate"}));
  EXPECT_FALSE(r.requeue_after);
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Failed");
  const std::string why =
      "the API server refused to create Service ns/j-worker (422 Invalid): Service \"j-worker\" "
      "is invalid: metadata.name: Invalid value: a DNS-1035 label must start with an alphabetic "
      "character; a request the server refuses is not retried";
  EXPECT_EQ(status["conditions"].back()["reason"], "FailedCreate");
  EXPECT_EQ(status["conditions"].back()["message"], why);
  EXPECT_EQ(EventFor("FailedCreate")["type"], "Warning");
  EXPECT_EQ(EventFor("FailedCreate")["message"], why);
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
}

TEST_F(ReconcilerTest, AWorkerTheServerRefusesFailsTheJobAndStopsTheOnesMade) {
  PutJob();
  faults_.FailFor("create", "j-worker-1", {403, "Forbidden", "exceeded quota: pods=1"});
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "delete pods ns/j-worker-0",
                              "update-status dljobs ns/j", "create events FailedCreate"}));
  EXPECT_EQ(JobStatus()["conditions"].back()["message"],
            "the API server refused to create Pod ns/j-worker-1 (403 Forbidden): exceeded quota: "
            "pods=1; deleted the workers bound so far; a request the server refuses is not "
            "retried");
}

TEST_F(ReconcilerTest, ALauncherTheServerRefusesFailsTheJob) {
  PutJob();
  Reconcile();
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running");
  faults_.FailFor("create", "j-launcher", {400, "BadRequest", "no"});
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-launcher", "update-status dljobs ns/j",
                              "create events FailedCreate", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["phase"], "Failed");
}

TEST_F(ReconcilerTest, TransientErrorsAreRetriedAndTheJobShowsAPhaseMeanwhile) {
  PutJob();
  for (int code : {500, 503, 429, 0, 401}) {
    SCOPED_TRACE(code);
    api_.FailNext("create", "services", {code, "Whatever", "not now"});
    Sync();
    api_.ClearCalls();
    Result<ReconcileResult> r = reconciler_.Reconcile("ns/j");
    ASSERT_FALSE(r.ok());  // the work queue retries with backoff
    EXPECT_EQ(JobStatus()["phase"], "Queued");
    EXPECT_EQ(JobStatus()["conditions"][0]["reason"], "Created");
  }
  std::string message = JobStatus()["conditions"][0]["message"];
  EXPECT_NE(
      message.find(
          "the last attempt failed, retrying: creating Service ns/j-worker: 500 Whatever: not now"),
      std::string::npos)
      << message;  // written by the first pass only: the phase is shown, not every error
  Reconcile();
  EXPECT_EQ(JobStatus()["phase"], "Scheduled");
}

TEST_F(ReconcilerTest, TheFirstPassShowsAPhaseEvenWhenAChildCannotBeMadeYet) {
  PutJob();
  api_.FailNext("create", "services", {503, "ServiceUnavailable", "etcd is busy"});
  Sync();
  api_.ClearCalls();
  ASSERT_FALSE(reconciler_.Reconcile("ns/j").ok());
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "update-status dljobs ns/j",
                              "create events Created"}));
  EXPECT_EQ(JobStatus()["phase"], "Queued");
  EXPECT_EQ(EventFor("Created")["type"], "Normal");
}

TEST_F(ReconcilerTest, SucceededLauncherFinishesTheJobAndCleansRunningPods) {
  RunJob();
  SetPod("j-launcher", "Succeeded");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events Succeeded",
                              "delete pods ns/j-worker-0", "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["phase"], "Succeeded");
  EXPECT_EQ(JobStatus()["completionTime"], "2026-01-02T03:04:05Z");
  EXPECT_TRUE(api_.Object(kPods, "ns", "j-launcher"));  // kept for its log
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
}

// The launcher exited 0 but its log collector is still reading the last lines (the final step and
// accuracy): the job stays Running a moment, looking again within a second, and is marked
// Succeeded once the collector is done (log_drain.h).
TEST_F(ReconcilerTest, ASucceededJobWaitsForItsLaunchersLogToBeReadToTheEnd) {
  RunJob();
  SetPod("j-launcher", "Succeeded");
  const std::string uid = (*api_.Object(kPods, "ns", "j-launcher"))["metadata"]["uid"];
  log_ended_[uid] = false;
  ReconcileResult r = Reconcile();
  EXPECT_EQ(Calls(), Strings{});
  EXPECT_EQ(JobStatus()["phase"], "Running");
  EXPECT_EQ(r.requeue_after, std::chrono::seconds(1));
  clock_.Advance(std::chrono::seconds(1));
  log_ended_[uid] = true;
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events Succeeded",
                              "delete pods ns/j-worker-0", "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["phase"], "Succeeded");
}

TEST_F(ReconcilerTest, ASucceededJobWaitsForItsLaunchersLogNoLongerThanTheGrace) {
  RunJob();
  SetPod("j-launcher", "Succeeded");
  log_ended_[(*api_.Object(kPods, "ns", "j-launcher"))["metadata"]["uid"]] = false;
  Reconcile();
  EXPECT_EQ(JobStatus()["phase"], "Running");
  clock_.Advance(kLauncherLogGrace);
  Reconcile();
  EXPECT_EQ(JobStatus()["phase"], "Succeeded");
}

TEST_F(ReconcilerTest, CleanPodPolicyAllAndNone) {
  RunJob({{"cleanPodPolicy", "None"}});
  SetPod("j-launcher", "Succeeded");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events Succeeded"}));
}

TEST_F(ReconcilerTest, FailedWorkerRestartsTheJobUntilTheBackoffLimit) {
  RunJob({{"backoffLimit", 1}});
  SetPod("j-worker-1", "Failed", false, 3);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events WorkerFailed",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Restarting");
  EXPECT_EQ(status["restarts"], 1);
  EXPECT_EQ(
      status["conditions"].back()["message"],
      "worker j-worker-1 exited with code 3 (Error); restarting the whole job (restart 1 of 1)");

  Reconcile();  // the pods are gone: the next incarnation starts
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "create pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(Body("create pods ns/j-worker-0"), ExpectedWorker(0, 1, "n1"));
  EXPECT_EQ(JobStatus()["phase"], "Restarting");

  SetPod("j-worker-0", "Failed", false, 1);
  SetPod("j-worker-1", "Running");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events BackoffLimitExceeded",
                              "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["phase"], "Failed");
}

TEST_F(ReconcilerTest, NotEnoughGpusLeavesTheJobQueuedWithAReasonAndNothingBound) {
  api_.Put(kNodes, GpuNode("n1", 2));
  PutJob();
  ReconcileResult r = Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "patch-status pods ns/j-worker-0",
                              "patch-status pods ns/j-worker-1", "update-status dljobs ns/j",
                              "create events Unschedulable"}));
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Queued");
  EXPECT_NE(status["conditions"][0]["message"].get<std::string>().find("2 workers"),
            std::string::npos)
      << status["conditions"][0]["message"];
  EXPECT_EQ(r.requeue_after, options_.queued_retry);
  EXPECT_FALSE(status.contains("startTime"));  // waiting is not running: no deadline counts yet
  clock_.Advance(std::chrono::seconds(90));
  api_.Put(kNodes, GpuNode("n2", 8));  // room appears
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(JobStatus()["startTime"], "2026-01-02T03:05:35Z");
}

TEST_F(ReconcilerTest, GpusPlacedButNotYetSeenBoundAreNotPlacedAgain) {
  PutJob(Json::object(), "a");
  PutJob(Json::object(), "b");
  PutJob(Json::object(), "c");
  Sync();  // and then no informer catches up between the three passes
  api_.ClearCalls();
  for (const char* job : {"ns/a", "ns/b", "ns/c"}) ASSERT_TRUE(reconciler_.Reconcile(job).ok());
  EXPECT_EQ(Body("create pods ns/a-worker-1")["spec"]["nodeName"], "n1");
  EXPECT_EQ(Body("create pods ns/b-worker-1")["spec"]["nodeName"], "n1");
  EXPECT_FALSE(Body("create pods ns/c-worker-0")["spec"].contains("nodeName"));  // pending
  for (const Call& c : api_.Calls()) EXPECT_NE(c.verb, "bind");
  EXPECT_EQ(JobStatus("c")["phase"], "Queued");
  EXPECT_EQ(ledger_.Waiting(), (Strings{"ns/c"}));
}

TEST_F(ReconcilerTest, AStrangersObjectWithOurNameIsReportedAndLeftAlone) {
  Json stranger = api_.Put(kServices, {{"metadata", {{"name", "j-worker"}, {"namespace", "ns"}}},
                                       {"spec", {{"clusterIP", "10.0.0.1"}}}});
  PutJob();
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "get services ns/j-worker",
                              "update-status dljobs ns/j", "create events NameConflict"}));
  EXPECT_EQ(*api_.Object(kServices, "ns", "j-worker"), stranger);
  EXPECT_EQ(JobStatus()["conditions"][0]["message"],
            "Service ns/j-worker already exists and is not owned by this DLJob; delete or rename "
            "it (the job needs that name)");
}

TEST_F(ReconcilerTest, SuspendDeletesThePodsAndResumeRecreatesThem) {
  RunJob();
  PutJob({{"suspend", true}});
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events Suspended",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["phase"], "Suspended");
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
  PutJob({{"suspend", false}});
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "create pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
}

TEST_F(ReconcilerTest, AChangedSpecRestartsTheWholeJobWithItWithoutSpendingBackoff) {
  RunJob({{"backoffLimit", 0}});
  Json job = *api_.Object(kDLJobs, "ns", "j");
  job["spec"]["image"] = "img:v2";
  job["metadata"]["generation"] = 2;
  api_.Put(kDLJobs, job);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events SpecChanged",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Restarting");
  EXPECT_EQ(status["specRestarts"], 1);
  EXPECT_EQ(status["restarts"], 0);
  EXPECT_EQ(status["observedGeneration"], 2);
  EXPECT_EQ(status["conditions"].back()["message"],
            "the job's spec changed (generation 2); restarting the whole job with it, from the "
            "start (no spec.checkpoint)");
  EXPECT_EQ(EventFor("SpecChanged")["type"], "Normal");

  Reconcile();  // the old pods are gone: the next incarnation runs the new image
  Json worker = Body("create pods ns/j-worker-0");
  EXPECT_EQ(worker, ExpectedWorker(0, 1, "n1"));
  EXPECT_EQ(worker["spec"]["containers"][0]["image"], "img:v2");
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});  // the new pods match the spec: nothing more to change
}

TEST_F(ReconcilerTest, RunPolicyQueueAndPriorityChangesNeedNoRestart) {
  RunJob();
  PutJob({{"backoffLimit", 7}, {"activeDeadlineSeconds", 3600}});
  Json job = *api_.Object(kDLJobs, "ns", "j");
  job["spec"]["scheduling"] = {{"priority", 5}};
  api_.Put(kDLJobs, job);
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
  EXPECT_EQ(JobStatus()["phase"], "Running");
}

TEST_F(ReconcilerTest, EveryPassRecordsTheGenerationItSaw) {
  Json job = PutJob();
  job["metadata"]["generation"] = 4;
  api_.Put(kDLJobs, job);
  Reconcile();
  EXPECT_EQ(JobStatus()["observedGeneration"], 4);
}

TEST_F(ReconcilerTest, FinishedJobIsDeletedAfterItsTtl) {
  RunJob({{"ttlSecondsAfterFinished", 60}});
  SetPod("j-launcher", "Succeeded");
  Reconcile();
  clock_.Advance(std::chrono::seconds(20));
  EXPECT_EQ(Reconcile().requeue_after, std::chrono::seconds(40));
  EXPECT_EQ(Calls(), Strings{});
  clock_.Advance(std::chrono::seconds(40));
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"delete dljobs ns/j"}));
}

TEST_F(ReconcilerTest, ActiveDeadlineFailsTheJobAndStopsItsPods) {
  RunJob({{"activeDeadlineSeconds", 100}});
  clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(Reconcile().requeue_after, std::chrono::seconds(70));
  clock_.Advance(std::chrono::seconds(70));
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events DeadlineExceeded",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["phase"], "Failed");
}

TEST_F(ReconcilerTest, NoProgressPastTheDeadlineRestartsTheJob) {
  RunJob({{"progressDeadlineSeconds", 60}});
  clock_.Advance(std::chrono::seconds(50));
  WallTime progress = clock_.Now();  // a metric line now
  clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(Reconcile("j", progress).requeue_after, std::chrono::seconds(30));
  clock_.Advance(std::chrono::seconds(30));
  Reconcile("j", progress);
  EXPECT_EQ(Calls()[1], "create events ProgressDeadlineExceeded");
  EXPECT_EQ(JobStatus()["phase"], "Restarting");
}

TEST_F(ReconcilerTest, InvalidJobFailsWithTheFieldErrors) {
  api_.Put(kDLJobs, {{"metadata", {{"name", "j"}, {"namespace", "ns"}}},
                     {"spec", {{"image", "img"}, {"command", {"x"}}, {"gpus", -2}}}});
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events InvalidSpec"}));
  std::string message = JobStatus()["conditions"][0]["message"];
  EXPECT_NE(message.find("spec.gpus"), std::string::npos) << message;
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
}

TEST_F(ReconcilerTest, StaleCacheEndsInConflictNotInDuplicateWork) {
  PutJob();
  Sync();
  PutJob();  // changed behind the cache's back
  api_.ClearCalls();
  Result<ReconcileResult> r = reconciler_.Reconcile("ns/j");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("409"), std::string::npos) << r.status().message();
}

TEST_F(ReconcilerTest, ALauncherFoundUnboundIsBound) {
  PutJob();
  Reconcile();
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running");
  // Launchers are created bound; this one was made unbound (by a release that bound launchers
  // after creating them, stopped in between).
  Json launcher = ExpectedLauncher();
  launcher["spec"].erase("nodeName");
  api_.Put(kPods, launcher);
  Reconcile();  // checked with the server, then bound
  EXPECT_EQ(Calls(), (Strings{"get pods ns/j-launcher", "bind pods ns/j-launcher",
                              "update-status dljobs ns/j", "create events WorkersReady"}));
  EXPECT_EQ(Body("bind pods ns/j-launcher")["node"], "n1");
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
}

// The timings reach the sink once each, from the writes that made the transitions: admitted when
// the gang was bound, started when mpirun ran; a pass that writes nothing reports nothing.
TEST_F(ReconcilerTest, ReportsQueueWaitAndStartOnceFromTheWritesThatLand) {
  Json job = PutJob();
  job["metadata"]["creationTimestamp"] = FormatRfc3339(clock_.Now() - std::chrono::seconds(30));
  api_.Put(kDLJobs, job);
  Reconcile();  // bound at once: admitted, after 30 s since creation
  clock_.Advance(std::chrono::seconds(20));
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running");
  Reconcile();
  SetPod("j-launcher", "Running");
  clock_.Advance(std::chrono::seconds(10));
  // The first try is refused (a stale cache): nothing counted.
  api_.FailNext("update-status", "dljobs", kube::ApiError{409, "Conflict", "stale"});
  Sync();
  EXPECT_FALSE(reconciler_.Reconcile("ns/j").ok());
  Reconcile();
  Reconcile();
  ASSERT_EQ(JobStatus()["phase"], "Running");
  MutexLock lock(timings_mu_);
  ASSERT_EQ(timings_.size(), 2u);
  EXPECT_EQ(timings_[0].first, "j");
  EXPECT_EQ(timings_[0].second.queue_wait_seconds, 30);
  EXPECT_FALSE(timings_[0].second.start_seconds);
  EXPECT_EQ(timings_[1].second.start_seconds, 60);
  EXPECT_FALSE(timings_[1].second.queue_wait_seconds);
}

}  // namespace
}  // namespace dljob::controller::testing
