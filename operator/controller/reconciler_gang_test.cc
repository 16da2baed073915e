// The reconciler's gang binding and worker-loss handling, as action lists: given these objects,
// exactly these API calls in this order (gang_binding.h, observation.h's FindLostWorker).
#include "jobs/spec_revision.h"
#include "operator/controller/gang_binding.h"
#include "operator/controller/reconciler.h"
#include "operator/controller/testing/reconciler_test_util.h"

namespace dljob::controller::testing {
namespace {

using kube::resources::kNodes;
using kube::resources::kPods;
using Strings = std::vector<std::string>;

constexpr char kNow[] = "2026-01-02T03:04:05Z";  // the FakeClock's start

class GangTest : public ReconcilerWorld {
 protected:
  void SetUp() override { api_.Put(kNodes, GpuNode("n1", 8)); }

  // The job's pods exist, unbound (first pass with no room), then the node has room again; the
  // caches have caught up with all of it.
  void QueuedJob() {
    api_.Put(kNodes, GpuNode("n1", 2));
    PutJob();
    Reconcile();
    ASSERT_EQ(JobStatus()["phase"], "Queued");
    api_.Put(kNodes, GpuNode("n1", 8));
    Sync();
  }
  // The server binds `pod` to `node` (a bind the caches have not seen).
  void BindBehindTheCache(const std::string& pod, const std::string& node) {
    Json p = *api_.Object(kPods, "ns", pod);
    p["spec"]["nodeName"] = node;
    api_.Put(kPods, p);
  }
  void RunJob() {
    PutJob();
    Reconcile();
    SetPod("j-worker-0", "Running");
    SetPod("j-worker-1", "Running");
    Reconcile();
    SetPod("j-launcher", "Running");
    Reconcile();
    ASSERT_EQ(JobStatus()["phase"], "Running");
  }
  // The pass, with the caches as they are now (no Sync).
  Result<ReconcileResult> PassWithoutSync() {
    api_.ClearCalls();
    return reconciler_.Reconcile("ns/j");
  }
  // The one Event created by the last pass.
  Json EventBody() const {
    for (const Call& c : api_.Calls()) {
      if (c.resource == "events") return c.body;
    }
    ADD_FAILURE() << "no event";
    return nullptr;
  }
  std::string JobCondition(const std::string& type, const char* field) {
    Json status = JobStatus();
    for (const Json& c : status["conditions"]) {
      if (c["type"] == type) return c.value(field, "");
    }
    return "";
  }
};

TEST_F(GangTest, ABindFailingHalfWayDeletesTheBoundWorkersAndTheJobIsPlacedAgain) {
  QueuedJob();
  faults_.FailFor("bind", "j-worker-1", {500, "InternalError", "etcd is sad"}, 3);
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_FALSE(r.ok());  // the queue backs off
  const std::string why =
      "binding pod ns/j-worker-1 to node n1 failed: 500 InternalError: etcd is sad; deleted the "
      "1 worker bound so far (j-worker-0), to place the job again";
  EXPECT_EQ(r.status().message(), why);
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "bind pods ns/j-worker-1", "bind pods ns/j-worker-1",
                              "delete pods ns/j-worker-0", "update-status dljobs ns/j",
                              "create events BindFailed"}));
  EXPECT_EQ(ledger_.Assumed(), 0u);  // forgotten: the GPUs are free for the next placement
  EXPECT_FALSE(api_.Object(kPods, "ns", "j-worker-0"));
  EXPECT_FALSE((*api_.Object(kPods, "ns", "j-worker-1"))["spec"].contains("nodeName"));
  EXPECT_EQ(JobStatus()["phase"], "Queued");
  EXPECT_EQ(JobCondition("Queued", "reason"), "BindFailed");
  EXPECT_EQ(JobCondition("Queued", "message"), why);
  EXPECT_EQ(EventBody()["type"], "Warning");
  EXPECT_EQ(EventBody()["message"], why);

  Reconcile();  // the whole gang placed: the deleted worker made again, bound, the other bound
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(Body("create pods ns/j-worker-0"), ExpectedWorker(0, 0, "n1"));
  EXPECT_EQ(JobStatus()["restarts"], 0);
}

TEST_F(GangTest, ACreateFailingHalfWayDeletesTheWorkersMadeAndTheJobIsPlacedAgain) {
  PutJob();
  Sync();
  faults_.FailFor("create", "j-worker-1", {500, "InternalError", "etcd is sad"}, 3);
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_FALSE(r.ok());  // the queue backs off
  const std::string why =
      "creating pod ns/j-worker-1 on node n1 failed: 500 InternalError: etcd is sad; deleted the "
      "1 worker bound so far (j-worker-0), to place the job again";
  EXPECT_EQ(r.status().message(), why);
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "create pods ns/j-worker-1",
                              "create pods ns/j-worker-1", "delete pods ns/j-worker-0",
                              "update-status dljobs ns/j", "create events BindFailed"}));
  EXPECT_EQ(ledger_.Assumed(), 0u);  // forgotten: the GPUs are free for the next placement
  EXPECT_TRUE(api_.Objects(kPods).empty());
  EXPECT_EQ(JobCondition("Queued", "reason"), "BindFailed");
  EXPECT_EQ(JobCondition("Queued", "message"), why);
  EXPECT_EQ(EventBody()["type"], "Warning");

  Reconcile();  // the whole gang made again, bound
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "create pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(Body("create pods ns/j-worker-1"), ExpectedWorker(1, 0, "n1"));
}

TEST_F(GangTest, ACreateWhoseAnswerWasLostCountsWhenThePodIsOnTheChosenNode) {
  PutJob();
  Sync();
  // The server made j-worker-0 but its answer was lost (a 503 from a proxy, say): the retry
  // finds it there, where it was placed.
  Json made = ExpectedWorker(0, 0, "n1");
  made["metadata"]["uid"] = "uid-made";
  api_.Put(kPods, made);
  faults_.FailFor("create", "j-worker-0", {503, "ServiceUnavailable", "try later"}, 1);
  ASSERT_TRUE(PassWithoutSync().ok());
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-0", "get pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "update-status dljobs ns/j",
                              "create events WorkersBound", "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(JobStatus()["phase"], "Scheduled");
}

TEST_F(GangTest, AStrangersPodHoldingAWorkersNameIsReportedAndTheGangUndone) {
  PutJob();
  Sync();
  Json stranger = ExpectedWorker(1, 0, "");
  stranger["metadata"].erase("ownerReferences");
  stranger["metadata"]["labels"] = Json::object();  // not the job's: its pods cache lacks it
  api_.Put(kPods, stranger);
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "get pods ns/j-worker-1",
                              "delete pods ns/j-worker-0", "update-status dljobs ns/j",
                              "create events NameConflict"}));
  EXPECT_EQ(JobCondition("Queued", "reason"), "NameConflict");
  EXPECT_EQ(JobCondition("Queued", "message"),
            "pod ns/j-worker-1 already exists and is not owned by this DLJob; delete or rename it "
            "(the job needs that name); deleted the workers bound so far (j-worker-0)");
  EXPECT_EQ(ledger_.Assumed(), 0u);
  EXPECT_EQ(r->requeue_after, options_.queued_retry);
}

TEST_F(GangTest, ABindFailureIsEventedEvenWhenItsStatusWriteLosesARace) {
  QueuedJob();
  faults_.FailFor("bind", "j-worker-1", {503, "ServiceUnavailable", "try later"}, 3);
  api_.FailNext("update-status", "dljobs", {409, "Conflict", "the object has been modified"});
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_FALSE(r.ok());
  // The refused status write, then the Warning anyway (then the new job's first phase, as after
  // any failed first pass).
  Strings calls = Calls();
  auto undone = std::find(calls.begin(), calls.end(), "delete pods ns/j-worker-0");
  ASSERT_GE(std::distance(undone, calls.end()), 3) << ::testing::PrintToString(calls);
  EXPECT_EQ(Strings(undone, undone + 3),
            (Strings{"delete pods ns/j-worker-0", "update-status dljobs ns/j",
                     "create events BindFailed"}));

  Reconcile();  // the retry places the whole gang; the failure stays told
  EXPECT_EQ(JobStatus()["phase"], "Scheduled");
}

TEST_F(GangTest, ABindRefusedForGoodUndoesTheGangAndFailsTheJob) {
  QueuedJob();
  faults_.FailFor("bind", "j-worker-1", {403, "Forbidden", "a webhook said no"});
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_TRUE(r.ok()) << r.status().message();  // nothing to retry
  EXPECT_FALSE(r->requeue_after);
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "delete pods ns/j-worker-0", "update-status dljobs ns/j",
                              "create events FailedBind", "delete pods ns/j-worker-1"}));
  EXPECT_EQ(ledger_.Assumed(), 0u);
  const std::string why =
      "the API server refused to bind Pod ns/j-worker-1 (403 Forbidden): a webhook said no; "
      "deleted the workers bound so far; a request the server refuses is not retried";
  EXPECT_EQ(JobStatus()["phase"], "Failed");
  EXPECT_EQ(JobCondition("Failed", "reason"), "FailedBind");
  EXPECT_EQ(JobCondition("Failed", "message"), why);
  EXPECT_EQ(EventBody()["type"], "Warning");
  EXPECT_EQ(EventBody()["message"], why);
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});
}

TEST_F(GangTest, A5xxOnABindIsRetriedWithBackoff) {
  QueuedJob();
  faults_.FailFor("bind", "j-worker-0", {500, "InternalError", "etcd is sad"}, 2);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "bind pods ns/j-worker-0",
                              "bind pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
  using std::chrono::milliseconds;
  EXPECT_EQ(clock_.sleeps(), (std::vector<Clock::Duration>{milliseconds(100), milliseconds(200)}));
}

TEST_F(GangTest, A5xxOnACreateIsRetriedWithBackoff) {
  PutJob();
  faults_.FailFor("create", "j-worker-0", {500, "InternalError", "etcd is sad"}, 2);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create services ns/j-worker", "create configmaps ns/j-config",
                              "create secrets ns/j-ssh", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-0", "create pods ns/j-worker-0",
                              "create pods ns/j-worker-1", "update-status dljobs ns/j",
                              "create events WorkersBound", "create poddisruptionbudgets ns/j"}));
  using std::chrono::milliseconds;
  EXPECT_EQ(clock_.sleeps(), (std::vector<Clock::Duration>{milliseconds(100), milliseconds(200)}));
}

TEST_F(GangTest, A5xxThatOutlastsTheRetriesUndoesTheGang) {
  QueuedJob();
  faults_.FailFor("bind", "j-worker-1", {503, "ServiceUnavailable", "try later"}, 3);
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "binding pod ns/j-worker-1 to node n1 failed: 503 ServiceUnavailable: try later; "
            "deleted the 1 worker bound so far (j-worker-0), to place the job again");
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "bind pods ns/j-worker-1", "bind pods ns/j-worker-1",
                              "delete pods ns/j-worker-0", "update-status dljobs ns/j",
                              "create events BindFailed"}));
}

TEST_F(GangTest, AConflictFromABindThatLandedOnTheChosenNodeCountsAsBound) {
  QueuedJob();
  BindBehindTheCache("j-worker-0", "n1");  // an earlier attempt whose answer was lost
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "get pods ns/j-worker-0",
                              "bind pods ns/j-worker-1", "update-status dljobs ns/j",
                              "create events WorkersBound", "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(JobStatus()["placement"], (Json::array({{{"node", "n1"}, {"gpus", 4}}})));
}

TEST_F(GangTest, AConflictFromABindToAnotherNodeUndoesTheGang) {
  QueuedJob();
  BindBehindTheCache("j-worker-0", "n2");
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "binding pod ns/j-worker-0 to node n1 failed: it is bound to node n2 already; deleted "
            "the 1 worker bound so far (j-worker-0), to place the job again");
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "get pods ns/j-worker-0",
                              "delete pods ns/j-worker-0", "update-status dljobs ns/j",
                              "create events BindFailed"}));
  EXPECT_EQ(ledger_.Assumed(), 0u);
}

TEST_F(GangTest, AHalfBoundGangIsCompletedOnceTheServerConfirmsItsBoundWorker) {
  QueuedJob();
  BindBehindTheCache("j-worker-0", "n1");  // the operator stopped after this bind
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"get pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
}

TEST_F(GangTest, AHalfBoundGangWhoseBoundWorkerIsGoneWaitsForTheCache) {
  QueuedJob();
  BindBehindTheCache("j-worker-0", "n1");
  Sync();
  api_.Erase(kPods, "ns", "j-worker-0");  // deleted (an undo, say); the cache shows it bound
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Calls(), (Strings{"get pods ns/j-worker-0"}));
  EXPECT_EQ(ledger_.Assumed(), 0u);
  EXPECT_EQ(r->requeue_after, options_.queued_retry);

  Reconcile();  // caught up: made again, bound, and the whole gang bound
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
}

TEST_F(GangTest, AHalfBoundGangWhoseRestNoLongerFitsGivesBackWhatItHolds) {
  QueuedJob();
  BindBehindTheCache("j-worker-0", "n1");
  api_.Put(kNodes, GpuNode("n1", 3));  // j-worker-0 holds 2 of 3: no room for j-worker-1's 2
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"delete pods ns/j-worker-0", "patch-status pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events Unschedulable"}));
  EXPECT_FALSE(api_.Object(kPods, "ns", "j-worker-0"));
  EXPECT_EQ(ledger_.Assumed(), 0u);
  EXPECT_EQ(JobStatus()["phase"], "Queued");
  EXPECT_EQ(JobCondition("Queued", "reason"), "Unschedulable");
}

TEST_F(GangTest, QueuedWorkersSayWhyInPodScheduledAndTheJobsEventComesOncePerReason) {
  api_.Put(kNodes, GpuNode("n1", 2));
  PutJob();
  Reconcile();
  std::string why = JobCondition("Queued", "message");
  ASSERT_NE(why.find("needs 2 workers"), std::string::npos) << why;
  Strings calls = Calls();
  EXPECT_EQ(Strings(calls.begin() + 5, calls.end()),
            (Strings{"patch-status pods ns/j-worker-0", "patch-status pods ns/j-worker-1",
                     "update-status dljobs ns/j", "create events Unschedulable"}));
  EXPECT_EQ(Body("patch-status pods ns/j-worker-1"),
            *UnschedulablePatch(*DesiredWorker(Job(), 1, 0, PodSpecRevision(Job()), options_.build),
                                why, kNow));
  Json condition = (*api_.Object(kPods, "ns", "j-worker-1"))["status"]["conditions"][0];
  EXPECT_EQ(condition["type"], "PodScheduled");
  EXPECT_EQ(condition["status"], "False");
  EXPECT_EQ(condition["reason"], "Unschedulable");
  EXPECT_EQ(condition["message"], why);
  EXPECT_EQ(EventBody()["message"], why);

  Reconcile();  // the same reason: nothing written, no second Event
  EXPECT_EQ(Calls(), Strings{});

  api_.Put(kNodes, GpuNode("n2", 1));  // still no room, but the reason says so differently
  clock_.Advance(std::chrono::seconds(10));
  Reconcile();
  std::string why2 = JobCondition("Queued", "message");
  EXPECT_NE(why2, why);
  EXPECT_EQ(Calls(), (Strings{"patch-status pods ns/j-worker-0", "patch-status pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events Unschedulable"}));
  condition = (*api_.Object(kPods, "ns", "j-worker-1"))["status"]["conditions"][0];
  EXPECT_EQ(condition["message"], why2);
  EXPECT_EQ(condition["lastTransitionTime"], kNow);  // still False since then
  EXPECT_EQ(EventBody()["message"], why2);

  api_.Put(kNodes, GpuNode("n2", 8));
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"bind pods ns/j-worker-0", "bind pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create events WorkersBound",
                              "create poddisruptionbudgets ns/j"}));
}

TEST_F(GangTest, AWorkerDeletedWhileTheJobRunsRestartsTheWholeJob) {
  RunJob();
  api_.Erase(kPods, "ns", "j-worker-1");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"get pods ns/j-worker-1", "update-status dljobs ns/j",
                              "create events WorkerLost", "delete pods ns/j-launcher",
                              "delete pods ns/j-worker-0"}));
  const std::string why =
      "worker j-worker-1 disappeared (deleted, evicted through the API, or its node was removed); "
      "restarting the whole job (restart 1 of 3)";
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Restarting");
  EXPECT_EQ(status["restarts"], 1);
  EXPECT_FALSE(status.contains("placement"));
  EXPECT_EQ(JobCondition("Restarting", "reason"), "WorkerLost");
  EXPECT_EQ(JobCondition("Restarting", "message"), why);
  EXPECT_EQ(EventBody()["type"], "Warning");
  EXPECT_EQ(EventBody()["message"], why);

  Reconcile();  // the next incarnation, whole
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "create pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create poddisruptionbudgets ns/j"}));
  EXPECT_EQ(Body("create pods ns/j-worker-1"), ExpectedWorker(1, 1, "n1"));
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running");
  Reconcile();
  SetPod("j-launcher", "Running");
  Reconcile();
  SetPod("j-launcher", "Succeeded");
  Reconcile();
  EXPECT_EQ(JobStatus()["phase"], "Succeeded");
  EXPECT_EQ(JobStatus()["restarts"], 1);
}

// The node lifecycle controller's view of a node whose kubelet stopped posting status at `since`.
Json UnreachableNode(const std::string& name, int gpus, const std::string& since) {
  Json node = GpuNode(name, gpus);
  node["status"]["conditions"] = {{{"type", "Ready"},
                                   {"status", "Unknown"},
                                   {"reason", "NodeStatusUnknown"},
                                   {"message", "Kubelet stopped posting node status."},
                                   {"lastTransitionTime", since}}};
  return node;
}

TEST_F(GangTest, ANodeLostUnderARunningJobRestartsItWholeOnTheNodesThatRemain) {
  RunJob();  // both workers and the launcher on n1
  api_.Put(kNodes, GpuNode("n2", 8));
  api_.Put(kNodes, UnreachableNode("n1", 8, kNow));
  // Not Ready for less than node_lost_after: a kubelet restart, not a loss. Looked at again when
  // it would be one.
  ReconcileResult waiting = Reconcile();
  EXPECT_EQ(Calls(), Strings{});
  ASSERT_TRUE(waiting.requeue_after.has_value());
  EXPECT_LE(*waiting.requeue_after, options_.node_lost_after);

  clock_.Advance(options_.node_lost_after);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events NodeLost",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  // Deleted at once: no kubelet on n1 will confirm a graceful delete.
  EXPECT_EQ(Body("delete pods ns/j-worker-0"), (Json{{"gracePeriodSeconds", 0}}));
  const std::string why =
      "node n1 has not been Ready since 2026-01-02T03:04:05Z (Unknown, NodeStatusUnknown, Kubelet "
      "stopped posting node status.); restarting the whole job on the nodes that remain, from the "
      "start (no spec.checkpoint)";
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Restarting");
  EXPECT_EQ(status["disruptionRestarts"], 1);
  EXPECT_EQ(status.value("restarts", 0), 0);  // backoffLimit is not spent on a lost node
  EXPECT_EQ(JobCondition("Restarting", "reason"), "NodeLost");
  EXPECT_EQ(JobCondition("Restarting", "message"), why);
  EXPECT_EQ(EventBody()["type"], "Warning");

  Reconcile();  // the next incarnation, whole, on n2
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-0", "create pods ns/j-worker-1",
                              "update-status dljobs ns/j", "create poddisruptionbudgets ns/j"}));
  for (const Json& p : api_.Objects(kPods)) EXPECT_EQ(p["spec"]["nodeName"], "n2") << p.dump();
}

TEST_F(GangTest, WhenTheNodesThatRemainCannotHoldALostNodesJobItWaitsSayingWhy) {
  RunJob();
  api_.Put(kNodes, UnreachableNode("n1", 8, kNow));
  clock_.Advance(options_.node_lost_after);
  Reconcile();
  ASSERT_EQ(JobStatus()["phase"], "Restarting");
  Reconcile();
  Json status = JobStatus();
  // It waits as a new job does, Queued with the placement's reason; why it restarted stays in
  // its Restarting condition.
  EXPECT_EQ(status["phase"], "Queued");
  EXPECT_EQ(JobCondition("Queued", "reason"), "Unschedulable");
  EXPECT_NE(JobCondition("Queued", "message").find("1 node(s) were unschedulable"),
            std::string::npos)
      << JobCondition("Queued", "message");
  EXPECT_EQ(JobCondition("Restarting", "reason"), "NodeLost");
  EXPECT_EQ(status["disruptionRestarts"], 1);
  // Its workers say why they wait, as kube-scheduler would.
  const Json scheduled = (*api_.Object(kPods, "ns", "j-worker-0"))["status"]["conditions"][0];
  EXPECT_EQ(scheduled["reason"], "Unschedulable");
  EXPECT_NE(scheduled.value("message", "").find("1 node(s) were unschedulable"), std::string::npos)
      << scheduled.dump();
  bool bound = false;
  for (const Json& p : api_.Objects(kPods)) bound = bound || p["spec"].contains("nodeName");
  EXPECT_FALSE(bound) << "no partial gang";
}

Json CordonedNode(const std::string& name, int gpus) {
  Json node = GpuNode(name, gpus);
  node["spec"]["unschedulable"] = true;
  return node;
}

TEST_F(GangTest, ACordonedNodeUnderARunningJobMovesItWholeOnceTheOthersCanHoldIt) {
  RunJob();  // on n1
  api_.Put(kNodes, CordonedNode("n1", 8));
  // Nowhere else to go: it runs on where it is, and looks again later.
  ReconcileResult stays = Reconcile();
  EXPECT_EQ(Calls(), Strings{});
  EXPECT_EQ(JobStatus()["phase"], "Running");
  ASSERT_TRUE(stays.requeue_after.has_value());

  api_.Put(kNodes, GpuNode("n2", 8));
  Reconcile();
  // Deleted gracefully (the ranks checkpoint on SIGTERM), not evicted pod by pod.
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events NodeCordoned",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  EXPECT_FALSE(Body("delete pods ns/j-worker-0").contains("gracePeriodSeconds"));
  Json status = JobStatus();
  EXPECT_EQ(status["phase"], "Restarting");
  EXPECT_EQ(status["disruptionRestarts"], 1);
  EXPECT_EQ(status.value("restarts", 0), 0);
  EXPECT_EQ(JobCondition("Restarting", "message"),
            "node n1 is cordoned (kubectl cordon or drain); moving the whole job to other nodes, "
            "from the start (no spec.checkpoint)");
  EXPECT_EQ(EventBody()["type"], "Normal");

  Reconcile();  // the next incarnation, whole, on n2
  for (const Json& p : api_.Objects(kPods)) EXPECT_EQ(p["spec"]["nodeName"], "n2") << p.dump();
}

TEST_F(GangTest, ABoundGangGetsAPodDisruptionBudgetOverAllItsPods) {
  PutJob();
  Reconcile();
  ASSERT_EQ(JobStatus()["phase"], "Scheduled");
  Json pdb = Body("create poddisruptionbudgets ns/j");
  EXPECT_EQ(pdb["apiVersion"], "policy/v1");
  EXPECT_EQ(pdb["metadata"]["ownerReferences"][0]["kind"], "DLJob");
  EXPECT_EQ(pdb["spec"], (Json{{"minAvailable", 3},  // 2 workers and the launcher
                               {"selector", {{"matchLabels", {{"dljob.io/job-name", "j"}}}}}}));
  SetPod("j-worker-0", "Running");
  SetPod("j-worker-1", "Running");
  Reconcile();
  EXPECT_EQ(JobStatus()["phase"], "Scheduled");  // WorkersReady: no second budget
  for (const std::string& c : Calls()) EXPECT_EQ(c.find("poddisruptionbudgets"), std::string::npos);
}

TEST_F(GangTest, APodStuckDeletingOnALostNodeIsDeletedAtOnceSoTheRestartGoesOn) {
  RunJob();
  // A restart began (the launcher failed) while n1 was still Ready; then n1 was lost.
  SetPod("j-launcher", "Failed", false, 1);
  std::vector<Json> pods = api_.Objects(kPods);
  Reconcile();
  ASSERT_EQ(JobStatus()["phase"], "Restarting");
  for (Json& pod : pods) {  // the fake deletes at once; a server waits for the kubelet
    pod["metadata"]["deletionTimestamp"] = kNow;
    api_.Put(kPods, pod);
  }
  api_.Put(kNodes, GpuNode("n2", 8));
  api_.Put(kNodes, UnreachableNode("n1", 8, kNow));
  Reconcile();
  EXPECT_EQ(Calls(), Strings{});  // not lost yet: the kubelet may be back
  clock_.Advance(options_.node_lost_after);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"delete pods ns/j-launcher", "delete pods ns/j-worker-0",
                              "delete pods ns/j-worker-1"}));
  EXPECT_EQ(Body("delete pods ns/j-launcher"), (Json{{"gracePeriodSeconds", 0}}));
  EXPECT_EQ(JobStatus().value("disruptionRestarts", 0), 0);  // a restart already under way
}

TEST_F(GangTest, AWorkerBeingDeletedRestartsTheJobAndSaysWhy) {
  RunJob();
  Json pod = *api_.Object(kPods, "ns", "j-worker-0");
  pod["metadata"]["deletionTimestamp"] = kNow;
  pod["status"]["conditions"].push_back({{"type", "DisruptionTarget"},
                                         {"status", "True"},
                                         {"reason", "EvictionByEvictionAPI"},
                                         {"message", "Eviction API: evicting"}});
  api_.Put(kPods, pod);
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/j", "create events WorkerLost",
                              "delete pods ns/j-launcher", "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobCondition("Restarting", "message"),
            "worker j-worker-0 is being deleted (EvictionByEvictionAPI: Eviction API: evicting); "
            "restarting the whole job (restart 1 of 3)");
}

TEST_F(GangTest, AWorkerDeletedWhileQueuedIsJustMadeAgain) {
  api_.Put(kNodes, GpuNode("n1", 2));
  PutJob();
  Reconcile();
  api_.Erase(kPods, "ns", "j-worker-1");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"create pods ns/j-worker-1", "patch-status pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["restarts"], 0);
}

// Nothing trained yet: the gang is made again without spending backoffLimit (a drain's eviction
// retried by name meets the new run's Pending pod; see Reconciler::RestartBeforeStart).
TEST_F(GangTest, AWorkerGoneBeforeTheLauncherButAfterTheGangWasBoundMakesTheGangAgainUncounted) {
  PutJob();
  Reconcile();  // bound: status.placement says so
  api_.Erase(kPods, "ns", "j-worker-0");
  Reconcile();
  EXPECT_EQ(Calls(), (Strings{"get pods ns/j-worker-0", "update-status dljobs ns/j",
                              "create events WorkerLost", "delete pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["restarts"], 0);
  EXPECT_EQ(JobStatus()["disruptionRestarts"], 1);
  EXPECT_EQ(JobStatus()["phase"], "Restarting");
  EXPECT_NE(JobCondition("Restarting", "message").find("before its launcher started"),
            std::string::npos)
      << JobCondition("Restarting", "message");
}

TEST_F(GangTest, AWorkerTheCacheHasNotSeenYetIsNotTakenForLost) {
  PutJob();
  Reconcile();  // bound: status.placement says so
  Sync();
  pods_.Remove("ns/j-worker-1");  // the job's informer is ahead of the pods' one
  Result<ReconcileResult> r = PassWithoutSync();
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Found on the server; the ledger has it placed, so the pass waits for the cache.
  EXPECT_EQ(Calls(), (Strings{"get pods ns/j-worker-1"}));
  EXPECT_EQ(JobStatus()["restarts"], 0);
  EXPECT_EQ(JobStatus()["phase"], "Scheduled");
}

}  // namespace
}  // namespace dljob::controller::testing
