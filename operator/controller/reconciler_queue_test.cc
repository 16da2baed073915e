// The queue in the operator: the QueueScheduler's passes over the caches decide, the reconciler
// obeys (admission.h). A job the queue has not admitted binds nothing and says why; a quota holds
// a job back and the DLQueue's status says so; a higher-priority job preempts a running one, which
// is suspended (not restarted), then resumes once room is back, and its status tells the story.
#include <chrono>
#include <set>
#include <thread>

#include "base/time_format.h"
#include "operator/controller/queue_scheduler.h"
#include "operator/controller/reconciler.h"
#include "operator/controller/testing/reconciler_test_util.h"
#include "scheduler/placement_policy.h"
#include "scheduler/queue/queue_policy.h"
#include "testing/wait.h"

namespace dljob::controller::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kDLQueues;
using kube::resources::kNodes;
using kube::resources::kPods;
using Strings = std::vector<std::string>;

class QueueTest : public ReconcilerWorld {
 protected:
  void SetUp() override { api_.Put(kNodes, GpuNode("n1", 4)); }

  static QueueSchedulerOptions Options(const std::string& policy = "dljob") {
    QueueSchedulerOptions o;
    o.queue = scheduler::QueueOptionsByName(policy).value();
    o.queue.min_run_time = 0;
    return o;
  }

  // A 4-GPU job of 2 workers with this priority, in queue `queue` ("" = unset).
  void PutQueuedJob(const std::string& name, int priority, const std::string& queue = "",
                    bool checkpoint = false) {
    Json job = {
        {"apiVersion", "dljob.io/v1alpha1"},
        {"kind", "DLJob"},
        {"metadata",
         {{"name", name}, {"namespace", "ns"}, {"creationTimestamp", "2026-01-02T03:00:00Z"}}},
        {"spec",
         {{"image", "img"},
          {"command", {"train"}},
          {"gpus", 4},
          {"gpusPerWorker", 2},
          {"scheduling", {{"priority", priority}}}}}};
    if (!queue.empty()) job["spec"]["scheduling"]["queue"] = queue;
    if (checkpoint) job["spec"]["checkpoint"] = {{"source", "pvc:ckpt/" + name}};
    if (auto old = api_.Object(kDLJobs, "ns", name)) job["status"] = (*old)["status"];
    api_.Put(kDLJobs, job);
  }

  // Caches caught up, then one queue pass.
  void Pass() {
    Sync();
    for (const std::string& k : queues_.Keys()) queues_.Remove(k);
    for (const Json& q : api_.Objects(kDLQueues)) queues_.Upsert(q);
    woken_.clear();
    ASSERT_TRUE(scheduler_.RunOnce().has_value());
  }

  // The job runs: its pods are made and bound, its workers and launcher Running.
  void RunToRunning(const std::string& job) {
    Reconcile(job);
    SetPod(job + "-worker-0", "Running");
    SetPod(job + "-worker-1", "Running");
    Reconcile(job);
    SetPod(job + "-launcher", "Running");
    Reconcile(job);
    ASSERT_EQ(JobStatus(job)["phase"], "Running");
  }

  // The job's launcher succeeds: the job ends and (cleanPodPolicy Running) its workers go.
  void FinishJob(const std::string& job) {
    SetPod(job + "-launcher", "Succeeded");
    Reconcile(job);
    ASSERT_EQ(JobStatus(job)["phase"], "Succeeded");
    ASSERT_FALSE(api_.Object(kPods, "ns", job + "-worker-0"));
  }

  Json Condition(const std::string& job, const std::string& type) {
    for (const Json& c : JobStatus(job).value("conditions", Json::array())) {
      if (c["type"] == type) return c;
    }
    return Json::object();
  }

  // Whether the last pass placed a pod: bound one, or created one bound (spec.nodeName set).
  bool Placed() const {
    for (const Call& c : api_.Calls()) {
      if (c.verb == "bind") return true;
      if (c.verb == "create" && c.resource == "pods" && c.body["spec"].contains("nodeName")) {
        return true;
      }
    }
    return false;
  }

  kube::Store queues_;
  AdmissionBook book_;
  scheduler::PlacementPolicyPtr policy_ = scheduler::MakePlacementPolicy("dljob").value();
  std::vector<std::string> woken_;
  QueueScheduler scheduler_{faults_,
                            clock_,
                            QueueSources{jobs_, job_pods_, queues_},
                            ledger_,
                            book_,
                            *policy_,
                            Options(),
                            [this](const std::string& key) { woken_.push_back(key); }};
  Reconciler queued_{faults_, clock_,
                     Caches{jobs_, pods_, services_, config_maps_, secrets_, ledger_, &book_},
                     options_, FixedKeys};

  ReconcileResult Reconcile(const std::string& name) {
    Sync();
    api_.ClearCalls();
    Result<ReconcileResult> r = queued_.Reconcile("ns/" + name);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : ReconcileResult{};
  }
};

TEST_F(QueueTest, AJobTheQueueHasNotSeenYetWaitsAndBindsNothing) {
  PutQueuedJob("a", 0);
  Reconcile("a");
  EXPECT_FALSE(Placed());
  EXPECT_EQ(JobStatus("a")["phase"], "Queued");
  EXPECT_EQ(Condition("a", "Queued")["reason"], "WaitingInQueue");

  Pass();
  EXPECT_EQ(woken_, (Strings{"ns/a"}));
  EXPECT_EQ(book_.Get("ns/a").verdict, Verdict::kAdmitted);
  Reconcile("a");
  EXPECT_TRUE(Placed());
  EXPECT_EQ(JobStatus("a")["phase"], "Scheduled");
}

TEST_F(QueueTest, TheSecondJobWaitsForRoomWithTheQueuesReason) {
  PutQueuedJob("a", 0);
  Pass();
  RunToRunning("a");
  PutQueuedJob("b", 0);
  Pass();
  Admission b = book_.Get("ns/b");
  ASSERT_EQ(b.verdict, Verdict::kWaiting);
  EXPECT_EQ(b.reason, "Unschedulable");
  Reconcile("b");
  EXPECT_FALSE(Placed());
  EXPECT_EQ(JobStatus("b")["phase"], "Queued");
  EXPECT_EQ(Condition("b", "Queued")["reason"], "Unschedulable");
  const std::string message = Condition("b", "Queued")["message"];
  EXPECT_EQ(message.rfind("needs 4 GPUs (any model, 2 workers × 2) in queue default; 0 free", 0),
            0u)
      << message;
  // Its pods say it too, for kubectl describe and cluster-autoscaler.
  Json pod = *api_.Object(kPods, "ns", "b-worker-0");
  EXPECT_EQ(pod["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_EQ(pod["status"]["conditions"][0]["message"], message);

  // a ends: b is admitted and binds.
  FinishJob("a");
  Pass();
  EXPECT_EQ(book_.Get("ns/b").verdict, Verdict::kAdmitted);
  Reconcile("b");
  EXPECT_TRUE(Placed());
}

TEST_F(QueueTest, AQuotaHoldsAJobBackAndTheQueueStatusSaysSo) {
  api_.Put(kDLQueues, {{"apiVersion", "dljob.io/v1alpha1"},
                       {"kind", "DLQueue"},
                       {"metadata", {{"name", "team-a"}}},
                       {"spec", {{"quotas", {{{"nominal", 2}, {"borrowingLimit", 0}}}}}}});
  PutQueuedJob("a", 0, "team-a");
  PutQueuedJob("b", 0, "other");
  Pass();
  Admission a = book_.Get("ns/a");
  ASSERT_EQ(a.verdict, Verdict::kWaiting);
  EXPECT_EQ(a.reason, "QuotaExceeded");
  Admission b = book_.Get("ns/b");
  ASSERT_EQ(b.verdict, Verdict::kWaiting);
  EXPECT_EQ(b.reason, "Inadmissible");
  EXPECT_NE(b.message.find("queue \"other\" does not exist (queues: team-a)"), std::string::npos)
      << b.message;

  Json status = (*api_.Object(kDLQueues, "", "team-a"))["status"];
  EXPECT_EQ(status["pendingJobs"], 1);
  EXPECT_EQ(status["runningJobs"], 0);
  Reconcile("a");
  EXPECT_FALSE(Placed());
  EXPECT_EQ(Condition("a", "Queued")["reason"], "QuotaExceeded");
}

// A job held back by its quota is made nothing (as Kueue keeps a workload suspended): no
// Service, ConfigMap, Secret or pod, only its Queued status; the pass that finds it admitted
// makes them all and binds the gang.
TEST_F(QueueTest, AJobHeldBackByItsQuotaGetsNoPodsUntilAdmittedThenOnePassMakesAndBindsThem) {
  auto queue = [](int nominal) {
    return Json{{"apiVersion", "dljob.io/v1alpha1"},
                {"kind", "DLQueue"},
                {"metadata", {{"name", "team-a"}}},
                {"spec", {{"quotas", {{{"nominal", nominal}, {"borrowingLimit", 0}}}}}}};
  };
  api_.Put(kDLQueues, queue(2));
  PutQueuedJob("a", 0, "team-a");
  Pass();
  ASSERT_EQ(book_.Get("ns/a").reason, "QuotaExceeded");
  Reconcile("a");
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/a", "create events QuotaExceeded"}));
  EXPECT_EQ(Condition("a", "Queued")["reason"], "QuotaExceeded");
  EXPECT_FALSE(api_.Object(kPods, "ns", "a-worker-0"));

  api_.Put(kDLQueues, queue(4));
  Pass();
  ASSERT_EQ(book_.Get("ns/a").verdict, Verdict::kAdmitted);
  // A failure while making them shows, rather than the queue's reason it no longer waits for.
  api_.FailNext("create", "services", {503, "ServiceUnavailable", "etcd is busy"});
  Sync();
  EXPECT_FALSE(queued_.Reconcile("ns/a").ok());
  EXPECT_EQ(Condition("a", "Queued")["reason"], "Created");
  Reconcile("a");
  EXPECT_TRUE(api_.Object(kPods, "ns", "a-worker-0"));
  EXPECT_TRUE(api_.Object(kPods, "ns", "a-worker-1"));
  EXPECT_TRUE(Placed());
  EXPECT_EQ(JobStatus("a")["phase"], "Scheduled");
}

// A queue borrows only from its cohort: team-b (nominal 0) waits while the idle quota is ml's,
// saying so, and is admitted once it joins ml.
TEST_F(QueueTest, AQueueBorrowsOnlyTheIdleQuotaOfItsCohort) {
  auto queue = [](const std::string& name, const std::string& cohort, int nominal) {
    return Json{{"apiVersion", "dljob.io/v1alpha1"},
                {"kind", "DLQueue"},
                {"metadata", {{"name", name}}},
                {"spec", {{"cohort", cohort}, {"quotas", {{{"nominal", nominal}}}}}}};
  };
  api_.Put(kDLQueues, queue("lender", "ml", 4));
  api_.Put(kDLQueues, queue("team-b", "vision", 0));
  PutQueuedJob("b", 0, "team-b");
  Pass();
  Admission b = book_.Get("ns/b");
  ASSERT_EQ(b.verdict, Verdict::kWaiting);
  EXPECT_EQ(b.reason, "QuotaExceeded");
  EXPECT_NE(b.message.find("borrowing 4 needs idle quota of other queues in cohort vision, "
                           "which have 0"),
            std::string::npos)
      << b.message;

  api_.Put(kDLQueues, queue("team-b", "ml", 0));
  Pass();
  EXPECT_EQ(book_.Get("ns/b").verdict, Verdict::kAdmitted);
  Json status = (*api_.Object(kDLQueues, "", "team-b"))["status"];
  EXPECT_EQ(status["borrowed"], Json::parse(R"([{"gpus": 4}])"));
}

// Run's timing comes from the injected clock: the first pass needs no trigger and its batch wait
// is the FakeClock's (recorded, not slept); with no trigger the next pass comes when the clock
// reaches `resync`, and not before however long the test waits in real time; a trigger makes a
// pass at once.
TEST_F(QueueTest, RunPassesOnATriggerAndAtResyncOnTheInjectedClock) {
  api_.Put(kNodes, GpuNode("n2", 16));
  PutQueuedJob("a", 0);
  Sync();
  QueueSchedulerOptions options = Options();
  options.resync = std::chrono::seconds(30);
  options.poll = std::chrono::milliseconds(1);
  Mutex mu;
  std::set<std::string> woken;
  AdmissionBook book;
  QueueScheduler runner(faults_, clock_, QueueSources{jobs_, job_pods_, queues_}, ledger_, book,
                        *policy_, options, [&](const std::string& key) {
                          MutexLock lock(mu);
                          woken.insert(key);
                        });
  auto was_woken = [&](const std::string& key) {
    MutexLock lock(mu);
    return woken.count(key) > 0;
  };
  std::jthread thread([&](std::stop_token stop) { runner.Run(stop); });

  ASSERT_TRUE(dljob::testing::Eventually([&] { return was_woken("ns/a"); }));
  EXPECT_EQ(clock_.sleeps(), std::vector<Clock::Duration>{options.batch});

  PutQueuedJob("b", 0);  // the scheduler is not told: it waits for the resync
  Sync();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // ~100 polls of a still clock
  EXPECT_FALSE(was_woken("ns/b"));
  clock_.Advance(options.resync);
  EXPECT_TRUE(dljob::testing::Eventually([&] { return was_woken("ns/b"); }));

  PutQueuedJob("c", 0);
  Sync();
  runner.Trigger();
  EXPECT_TRUE(dljob::testing::Eventually([&] { return was_woken("ns/c"); }));
  EXPECT_EQ(clock_.sleeps().size(), 3u);  // one batch wait per pass, none real
}

// TriggerIfWaiting (a running job's status, its pods created or turning Running) makes a pass only
// while the last one left a job waiting or acted; Trigger always does.
TEST_F(QueueTest, ARunningJobsChangesMakePassesOnlyWhileAJobWaits) {
  PutQueuedJob("a", 0);  // n1's 4 GPUs
  Sync();
  QueueSchedulerOptions options = Options();
  options.poll = std::chrono::milliseconds(1);
  AdmissionBook book;
  QueueScheduler runner(faults_, clock_, QueueSources{jobs_, job_pods_, queues_}, ledger_, book,
                        *policy_, options, [](const std::string&) {});
  std::jthread thread([&](std::stop_token stop) { runner.Run(stop); });
  auto passes = [&] { return clock_.sleeps().size(); };  // one batch wait per pass
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };

  ASSERT_TRUE(dljob::testing::Eventually([&] { return passes() == 1; }));  // a is admitted
  settle();
  runner.TriggerIfWaiting();  // the last pass acted: this one may find more to do
  ASSERT_TRUE(dljob::testing::Eventually([&] { return passes() == 2; }));
  settle();
  runner.TriggerIfWaiting();  // nothing waits and nothing was done: no pass
  settle();
  EXPECT_EQ(passes(), 2u);

  PutQueuedJob("b", 0);  // no room left: b waits
  Sync();
  runner.Trigger();
  ASSERT_TRUE(dljob::testing::Eventually([&] { return passes() == 3; }));
  settle();
  runner.TriggerIfWaiting();  // b waits: a running job's change may let it start
  EXPECT_TRUE(dljob::testing::Eventually([&] { return passes() == 4; }));
  settle();
  EXPECT_EQ(passes(), 4u);
}

// Start estimates: a job waiting for a running one's node is told when it should start, first
// from the running job's time limit, then, once its steps are seen to move, from its progress; the
// estimate goes in its status and at the end of its Queued message, and leaves once it is placed.
TEST_F(QueueTest, AWaitingJobIsToldWhenItShouldStartFromTheRunningJobsLimitThenItsProgress) {
  QueueSchedulerOptions options = Options();
  options.estimate_every = std::chrono::seconds(30);
  QueueScheduler estimating(faults_, clock_, QueueSources{jobs_, job_pods_, queues_}, ledger_,
                            book_, *policy_, options, [](const std::string&) {});
  auto pass = [&] {
    Sync();
    ASSERT_TRUE(estimating.RunOnce().has_value());
  };
  auto unix_now = [&] { return UnixSeconds(clock_.Now()); };
  PutQueuedJob("a", 0);
  Json a = *api_.Object(kDLJobs, "ns", "a");
  a["spec"]["runPolicy"] = {{"activeDeadlineSeconds", 3600}};
  api_.Put(kDLJobs, a);
  pass();
  RunToRunning("a");
  const int64_t started = unix_now();

  PutQueuedJob("b", 0);  // needs all of n1, which a holds
  pass();
  Reconcile("b");
  Json estimate = JobStatus("b")["startEstimate"];
  EXPECT_EQ(estimate["basis"], "TimeLimit");
  EXPECT_EQ(estimate["time"], FormatRfc3339(WallTime(std::chrono::seconds(started + 3600))));
  EXPECT_NE(Condition("b", "Queued")["message"].get<std::string>().find(
                "; estimated start " + estimate["time"].get<std::string>() + ", when ns/a"),
            std::string::npos)
      << Condition("b", "Queued")["message"];

  // a reports step 100 of 1,000, then step 200 ten seconds later: 10 steps a second, 80 s left.
  auto report = [&](int64_t step) {
    Json job = *api_.Object(kDLJobs, "ns", "a");
    job["status"]["throughput"] = {
        {"step", step}, {"totalSteps", 1000}, {"updatedAt", FormatRfc3339(clock_.Now())}};
    api_.Put(kDLJobs, job);
    pass();
  };
  report(100);
  clock_.Advance(std::chrono::seconds(10));
  report(200);
  const int64_t reported = unix_now();
  clock_.Advance(std::chrono::seconds(30));  // the next estimate is due, and the restatement
  pass();
  Reconcile("b");
  estimate = JobStatus("b")["startEstimate"];
  EXPECT_EQ(estimate["basis"], "Progress");
  EXPECT_EQ(estimate["time"], FormatRfc3339(WallTime(std::chrono::seconds(reported + 80))));
  EXPECT_NE(estimate["assumption"].get<std::string>().find("ns/a"), std::string::npos);

  FinishJob("a");
  pass();
  Reconcile("b");
  EXPECT_NE(JobStatus("b")["phase"], "Queued");
  EXPECT_FALSE(JobStatus("b").contains("startEstimate"));
}

TEST_F(QueueTest, AHigherPriorityJobPreemptsARunningOneWhichResumesLater) {
  PutQueuedJob("low", 0);
  Pass();
  RunToRunning("low");
  clock_.Advance(std::chrono::seconds(100));

  PutQueuedJob("high", 10);
  Pass();
  ASSERT_EQ(book_.Get("ns/low").verdict, Verdict::kPreempt);
  EXPECT_EQ(book_.Get("ns/high").verdict, Verdict::kAdmitted);

  // The preempted job is suspended: status first, then its pods; no restart.
  const Json launcher = *api_.Object(kPods, "ns", "low-launcher");
  Reconcile("low");
  EXPECT_EQ(Calls(), (Strings{"update-status dljobs ns/low", "create events Preempted",
                              "delete pods ns/low-launcher", "delete pods ns/low-worker-0",
                              "delete pods ns/low-worker-1"}));
  Json low = JobStatus("low");
  EXPECT_EQ(low["phase"], "Queued");
  EXPECT_EQ(low["restarts"], 0);
  EXPECT_EQ(low["preemptions"], 1);
  EXPECT_EQ(low["attainedGpuSeconds"], 400);  // 100 s × 4 GPUs
  EXPECT_EQ(Condition("low", "Preempted")["status"], "True");
  const std::string why = Condition("low", "Queued")["message"];
  EXPECT_EQ(why.rfind("suspended for ns/high (priority 10 > 0)", 0), 0u) << why;
  EXPECT_NE(why.find("it has no spec.checkpoint, so it starts over"), std::string::npos) << why;
  Admission after = book_.Get("ns/low");
  EXPECT_EQ(after.verdict, Verdict::kWaiting);
  EXPECT_EQ(after.reason, "Preempted");

  // The informers may see the workers go before the launcher: the preempted run's leftovers are
  // not a lost worker (seen under load: the job failed with BackoffLimitExceeded instead).
  api_.Put(kPods, launcher);
  Reconcile("low");
  low = JobStatus("low");
  EXPECT_EQ(low["phase"], "Queued") << low.dump();
  EXPECT_EQ(low["restarts"], 0);
  EXPECT_EQ(Condition("low", "Preempted")["status"], "True");
  EXPECT_FALSE(Placed());  // it waits, as any job the queue has not admitted
  api_.Erase(kPods, "ns", "low-launcher");

  // The high-priority job binds on the freed GPUs and runs.
  Pass();
  RunToRunning("high");
  EXPECT_EQ(book_.Get("ns/low").verdict, Verdict::kWaiting);

  // It ends; the preempted job is admitted again and resumes, counting no restart.
  FinishJob("high");
  Pass();
  ASSERT_EQ(book_.Get("ns/low").verdict, Verdict::kAdmitted);
  RunToRunning("low");
  low = JobStatus("low");
  EXPECT_EQ(low["restarts"], 0);
  EXPECT_EQ(low["preemptions"], 1);
  EXPECT_EQ(Condition("low", "Running")["reason"], "Resumed");
  EXPECT_EQ(Condition("low", "Preempted")["status"], "False");
  EXPECT_EQ(Condition("low", "Preempted")["reason"], "Resumed");
  EXPECT_EQ(Condition("low", "Running")["message"],
            "mpirun is running on 2 workers again after 1 preemption(s), from the start (no "
            "spec.checkpoint)");
  // A later pass changes nothing.
  Reconcile("low");
  EXPECT_EQ(Calls(), Strings{});
}

// las: no priorities, no runtime estimates. A job that has held its GPUs past the first level of
// attained service (3,600 GPU-seconds) gives way to a new one by suspension, and resumes from its
// checkpoint afterwards; what it had is kept in status.attainedGpuSeconds.
class LasTest : public QueueTest {
 protected:
  QueueScheduler las_{faults_,
                      clock_,
                      QueueSources{jobs_, job_pods_, queues_},
                      ledger_,
                      book_,
                      *policy_,
                      Options("las"),
                      [this](const std::string& key) { woken_.push_back(key); }};
  void LasPass() {
    Sync();
    ASSERT_TRUE(las_.RunOnce().has_value());
  }
};

TEST_F(LasTest, AJobPastTheFirstLevelIsSuspendedForANewOneAndResumesFromItsCheckpoint) {
  PutQueuedJob("old", 0, "", /*checkpoint=*/true);
  LasPass();
  RunToRunning("old");
  clock_.Advance(std::chrono::seconds(600));  // 2,400 GPU-seconds: still level 0
  PutQueuedJob("new", 0);
  LasPass();
  EXPECT_EQ(book_.Get("ns/old").verdict, Verdict::kAdmitted);
  EXPECT_EQ(book_.Get("ns/new").verdict, Verdict::kWaiting);

  clock_.Advance(std::chrono::seconds(301));  // 3,604 GPU-seconds: level 1
  LasPass();
  ASSERT_EQ(book_.Get("ns/old").verdict, Verdict::kPreempt);
  Reconcile("old");
  Json old = JobStatus("old");
  EXPECT_EQ(old["attainedGpuSeconds"], 3604);
  EXPECT_EQ(old["preemptions"], 1);
  EXPECT_EQ(old["restarts"], 0);
  const std::string why = Condition("old", "Queued")["message"];
  EXPECT_NE(why.find("it resumes from its checkpoint when the queue admits it again"),
            std::string::npos)
      << why;

  LasPass();
  RunToRunning("new");
  FinishJob("new");
  LasPass();
  ASSERT_EQ(book_.Get("ns/old").verdict, Verdict::kAdmitted);
  RunToRunning("old");
  EXPECT_EQ(Condition("old", "Running")["message"],
            "mpirun is running on 2 workers again after 1 preemption(s), from its checkpoint");
  // The checkpoint is where it was: worker 0 mounts it and is told where it is.
  Json worker = *api_.Object(kPods, "ns", "old-worker-0");
  EXPECT_NE(worker.dump().find("DLJOB_CHECKPOINT_DIR"), std::string::npos);
}

// An elastic job (1 to 4 workers of 2 GPUs) starts on what is free, grows once GPUs have been idle
// for the queue's grow_after, and is shrunk, not suspended, for a higher-priority job: each
// resize a whole-job restart at the new size (status.resizes, an Event, a new incarnation, the
// hostfile and mpirun's -np of that size).
TEST_F(QueueTest, AnElasticJobStartsSmallGrowsOntoIdleGpusAndShrinksForAHigherPriorityOne) {
  api_.Put(kNodes, GpuNode("n2", 4));
  PutQueuedJob("a", 0);  // 4 GPUs
  Json el = {{"apiVersion", "dljob.io/v1alpha1"},
             {"kind", "DLJob"},
             {"metadata",
              {{"name", "el"}, {"namespace", "ns"}, {"creationTimestamp", "2026-01-02T03:00:01Z"}}},
             {"spec",
              {{"image", "img"},
               {"command", {"train"}},
               {"gpusPerWorker", 2},
               {"elastic", {{"minGpus", 2}, {"maxGpus", 8}}},
               {"checkpoint", {{"source", "pvc:ckpt/el"}}}}}};
  api_.Put(kDLJobs, el);
  Pass();
  ASSERT_EQ(book_.Get("ns/el").verdict, Verdict::kAdmitted);
  EXPECT_EQ(book_.Get("ns/el").placement.worker_nodes.size(), 2u);  // what a leaves free
  RunToRunning("a");
  RunToRunning("el");
  EXPECT_EQ(JobStatus("el")["workers"]["desired"], 2);
  EXPECT_FALSE(api_.Object(kPods, "ns", "el-worker-2"));

  FinishJob("a");
  Pass();  // n1 is free from now
  EXPECT_EQ(book_.Get("ns/el").placement.worker_nodes.size(), 2u);
  clock_.Advance(std::chrono::seconds(300));
  Pass();
  ASSERT_EQ(book_.Get("ns/el").placement.worker_nodes.size(), 4u);
  EXPECT_EQ(book_.Get("ns/el").reason, "Resized");
  EXPECT_EQ(woken_, (Strings{"ns/el"}));
  Reconcile("el");
  Json status = JobStatus("el");
  EXPECT_EQ(status["phase"], "Restarting");
  EXPECT_EQ(status["resizes"], 1);
  EXPECT_EQ(status.value("restarts", 0), 0);
  EXPECT_EQ(status["workers"]["desired"], 4);
  EXPECT_EQ(Condition("el", "Restarting")["reason"], "Resized");
  EXPECT_EQ(Condition("el", "Restarting")["message"],
            "grew 2 → 4 workers onto GPUs idle for 300 s; restarting the whole job on 4 workers, "
            "from its checkpoint");
  EXPECT_EQ(EventFor("Resized")["type"], "Normal");
  EXPECT_FALSE(api_.Object(kPods, "ns", "el-worker-0"));  // the old run's pods go first

  Reconcile("el");  // the new run: 4 workers, created bound, the hostfile replaced
  EXPECT_EQ(Calls(), (Strings{"update configmaps ns/el-config", "create pods ns/el-worker-0",
                              "create pods ns/el-worker-1", "create pods ns/el-worker-2",
                              "create pods ns/el-worker-3", "update-status dljobs ns/el",
                              "create poddisruptionbudgets ns/el", "get poddisruptionbudgets ns/el",
                              "update poddisruptionbudgets ns/el"}));
  EXPECT_EQ(IncarnationOf(*api_.Object(kPods, "ns", "el-worker-3")), 1);
  const std::string hostfile =
      (*api_.Object(kube::resources::kConfigMaps, "ns", "el-config"))["data"]["hostfile"];
  EXPECT_NE(hostfile.find("el-worker-3"), std::string::npos) << hostfile;
  EXPECT_EQ(
      (*api_.Object(kube::resources::kPodDisruptionBudgets, "ns", "el"))["spec"]["minAvailable"],
      5);
  for (int i = 0; i < 4; ++i) SetPod("el-worker-" + std::to_string(i), "Running");
  Reconcile("el");
  const std::string launcher = (*api_.Object(kPods, "ns", "el-launcher")).dump();
  EXPECT_NE(launcher.find(R"("-np","8")"), std::string::npos) << launcher;
  SetPod("el-launcher", "Running");
  Reconcile("el");
  EXPECT_EQ(JobStatus("el")["phase"], "Running");

  PutQueuedJob("hi", 10);  // 4 GPUs: el gives back 2 workers rather than being suspended
  Pass();
  EXPECT_EQ(book_.Get("ns/el").verdict, Verdict::kAdmitted);
  EXPECT_EQ(book_.Get("ns/el").placement.worker_nodes.size(), 2u);
  EXPECT_EQ(book_.Get("ns/hi").verdict, Verdict::kAdmitted);
  Reconcile("el");
  status = JobStatus("el");
  EXPECT_EQ(status["resizes"], 2);
  EXPECT_EQ(status.value("preemptions", 0), 0);
  EXPECT_NE(Condition("el", "Restarting")["message"].get<std::string>().find(
                "shrunk 4 → 2 workers for ns/hi"),
            std::string::npos)
      << Condition("el", "Restarting");
}

}  // namespace
}  // namespace dljob::controller::testing
