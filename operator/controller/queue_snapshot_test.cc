// BuildQueueSnapshot and QueueStatuses: how the operator's caches become the queue's input.
#include "operator/controller/queue_snapshot.h"

#include <gtest/gtest.h>

#include "base/time_format.h"

namespace dljob::controller {
namespace {

using Json = nlohmann::json;
using Strings = std::vector<std::string>;

const WallTime kNow = WallTime(std::chrono::seconds(1'800'000'000));

// A 4-GPU job of 2 workers in namespace ns.
Json JobObject(const std::string& name, Json scheduling = Json::object(),
               Json status = Json::object()) {
  return {{"apiVersion", "dljob.io/v1alpha1"},
          {"kind", "DLJob"},
          {"metadata",
           {{"name", name}, {"namespace", "ns"}, {"creationTimestamp", "2027-01-15T08:00:00Z"}}},
          {"spec",
           {{"image", "img"},
            {"command", {"train"}},
            {"gpus", 4},
            {"gpusPerWorker", 2},
            {"scheduling", scheduling}}},
          {"status", status}};
}

Json Pod(const std::string& name, const std::string& role, const std::string& node,
         const std::string& job) {
  Json pod = {{"metadata",
               {{"name", name},
                {"namespace", "ns"},
                {"labels", {{"dljob.io/job-name", job}, {"dljob.io/role", role}}}}},
              {"spec", Json::object()},
              {"status", {{"phase", "Running"}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

scheduler::Node GpuNode(const std::string& name, int64_t gpus, int64_t used) {
  scheduler::Node n;
  n.name = name;
  n.allocatable.gpus = gpus;
  n.used.gpus = used;
  return n;
}

LedgerView::Pod Counted(const std::string& node, int64_t gpus) {
  scheduler::Resources r;
  r.gpus = gpus;
  r.pods = 1;
  return {node, r};
}

class SnapshotTest : public ::testing::Test {
 protected:
  QueueSnapshot Build(WallTime now = kNow) {
    // As the caches hand them out: shared, immutable objects.
    auto shared = [](const std::vector<Json>& objects) {
      kube::Objects out;
      for (const Json& o : objects) out.push_back(std::make_shared<const Json>(o));
      return out;
    };
    std::map<std::string, kube::Objects> pods;
    for (const auto& [key, list] : pods_) pods[key] = shared(list);
    return BuildQueueSnapshot(shared(jobs_), pods, queues_, ledger_, book_, now);
  }
  const scheduler::JobSnapshot* Find(const QueueSnapshot& s, const std::string& key) {
    for (const auto& j : s.jobs) {
      if (j.request.name == key) return &j;
    }
    return nullptr;
  }

  std::vector<Json> jobs_;
  std::map<std::string, std::vector<Json>> pods_;
  std::vector<Json> queues_;
  LedgerView ledger_{{GpuNode("n1", 8, 0), GpuNode("n2", 8, 0)}, {}};
  AdmissionBook book_;
};

TEST(ChangesQueueTest, ASpecChangeDeletionOrEndChangesTheQueueARunningJobsStatusDoesNot) {
  const Json queued = JobObject("a", {{"priority", 1}}, {{"phase", "Pending"}});
  Json running = queued;
  running["status"] = {{"phase", "Running"},
                       {"conditions", {{{"type", "Running"}, {"status", "True"}}}},
                       {"workers", {{"ready", 2}}}};
  running["metadata"]["resourceVersion"] = "7";
  EXPECT_FALSE(ChangesQueue(queued, running));  // its status as it starts

  Json changed = running;
  changed["spec"]["scheduling"]["priority"] = 5;
  EXPECT_TRUE(ChangesQueue(running, changed));
  changed = running;
  changed["spec"]["runPolicy"]["suspend"] = true;
  EXPECT_TRUE(ChangesQueue(running, changed));
  changed = running;
  changed["metadata"]["deletionTimestamp"] = "2027-01-15T09:00:00Z";
  EXPECT_TRUE(ChangesQueue(running, changed));
  changed = running;
  changed["status"]["phase"] = "Succeeded";  // its GPUs and quota are free
  EXPECT_TRUE(ChangesQueue(running, changed));
  EXPECT_TRUE(ChangesQueue(changed, running));  // run again
}

TEST(QueuedJobsTest, EachVersionOfAnObjectIsDecodedOnceAndOnlyQueuedJobsAreReturned) {
  auto object = [](Json o) { return std::make_shared<const Json>(std::move(o)); };
  kube::ObjectPtr a = object(JobObject("a", {{"priority", 3}}));
  kube::ObjectPtr done = object(JobObject("done", {}, {{"phase", "Succeeded"}}));
  kube::ObjectPtr invalid = object(JobObject("bad"));
  invalid = object([&] {
    Json o = *invalid;
    o["spec"]["gpus"] = 3;  // not a multiple of gpusPerWorker
    return o;
  }());
  QueuedJobs jobs;
  std::vector<QueuedJobPtr> first = jobs.Refresh({a, done, invalid});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]->job.metadata.name, "a");
  EXPECT_EQ(first[0]->job.spec.scheduling.priority, 3);
  // What a pass reads of every job, derived with the decode.
  const QueuedJob& q = *first[0];
  EXPECT_EQ(q.key, "ns/a");
  EXPECT_EQ(q.request.name, "ns/a");
  EXPECT_EQ(q.request.priority, 3);
  EXPECT_EQ(q.request.gang.workers, 2);
  EXPECT_EQ(q.worker_keys, (std::vector<std::string>{"ns/a-worker-0", "ns/a-worker-1"}));
  EXPECT_EQ(q.created, UnixSeconds(*ParseRfc3339("2027-01-15T08:00:00Z")));
  EXPECT_EQ(q.run_start, std::nullopt);  // not scheduled yet
  EXPECT_EQ(jobs.decoded(), 3u);

  // The same versions: nothing decoded again, the same decode handed out.
  std::vector<QueuedJobPtr> again = jobs.Refresh({a, done, invalid});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0], first[0]);
  EXPECT_EQ(jobs.decoded(), 3u);

  // A new version of a (the informer's new pointer) is decoded; a gone object is forgotten.
  kube::ObjectPtr a2 = object(JobObject("a", {{"priority", 7}}));
  std::vector<QueuedJobPtr> changed = jobs.Refresh({a2, done});
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0]->job.spec.scheduling.priority, 7);
  EXPECT_EQ(jobs.decoded(), 4u);
  EXPECT_TRUE(jobs.Refresh({}).empty());
  EXPECT_EQ(jobs.Refresh({a2}).size(), 1u);
  EXPECT_EQ(jobs.decoded(), 5u);  // forgotten, so decoded afresh
}

TEST_F(SnapshotTest, BoundWorkersMakeAJobRunningThereAndTheRestPend) {
  Json running_since = {
      {"type", "Running"}, {"status", "True"}, {"lastTransitionTime", "2027-01-15T07:00:00Z"}};
  Json status = {{"phase", "Running"}, {"conditions", Json::array({running_since})}};
  jobs_ = {JobObject("run", {{"priority", 5}, {"queue", "team-a"}}, status), JobObject("wait"),
           JobObject("done", {}, {{"phase", "Succeeded"}})};
  jobs_.push_back(JobObject("held"));
  jobs_.back()["spec"]["runPolicy"] = {{"suspend", true}};
  pods_["ns/run"] = {Pod("run-worker-0", "worker", "n1", "run"),
                     Pod("run-worker-1", "worker", "n2", "run"),
                     Pod("run-launcher", "launcher", "n1", "run")};
  ledger_.nodes = {GpuNode("n1", 8, 2), GpuNode("n2", 8, 2)};
  QueueSnapshot s = Build();
  ASSERT_EQ(s.jobs.size(), 2u);  // finished and suspended jobs do not count
  const scheduler::JobSnapshot* run = Find(s, "ns/run");
  ASSERT_TRUE(run && run->placement);
  EXPECT_EQ(run->placement->worker_nodes, (Strings{"n1", "n2"}));
  EXPECT_EQ(run->request.priority, 5);
  EXPECT_EQ(run->request.queue, "team-a");
  EXPECT_EQ(run->start_time, 1'800'000'000 - 3600);  // since Running became True
  const scheduler::JobSnapshot* wait = Find(s, "ns/wait");
  ASSERT_TRUE(wait);
  EXPECT_FALSE(wait->placement);
  EXPECT_EQ(wait->request.queue, "default");
  EXPECT_EQ(wait->request.gang.workers, 2);
  EXPECT_EQ(s.running, Strings{"ns/run"});
  EXPECT_EQ(s.nodes[0].used.gpus, 2);  // as the ledger counts them
  // No DLQueues: every queue named is one without a limit.
  EXPECT_FALSE(s.queues_defined);
  ASSERT_EQ(s.queues.size(), 2u);
  EXPECT_EQ(s.queues[0].name, "default");
  EXPECT_EQ(s.queues[1].name, "team-a");
}

TEST_F(SnapshotTest, PodsBeingDeletedCountAsFree) {
  jobs_ = {JobObject("a", {}, {{"phase", "Restarting"}, {"restarts", 1}})};
  Json old = Pod("a-worker-0", "worker", "n1", "a");
  old["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  pods_["ns/a"] = {old};
  ledger_.nodes = {GpuNode("n1", 8, 2), GpuNode("n2", 8, 0)};
  ledger_.pods["ns/a-worker-0"] = Counted("n1", 2);
  QueueSnapshot s = Build();
  EXPECT_EQ(s.nodes[0].used.gpus, 0);
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_FALSE(s.jobs[0].placement);  // its old incarnation's pod does not make it running
}

TEST_F(SnapshotTest, AnAdmittedJobNotYetBoundRunsAtItsPlanWhichTheNodesCount) {
  jobs_ = {JobObject("a")};
  scheduler::Decision d;
  d.start.push_back({"ns/a", scheduler::Placement{{"n2", "n2"}}, false});
  book_.Record(d, {}, {}, kNow);
  // Worker 0 is already assumed by the ledger (on n1: the ledger's choice wins); worker 1 is not.
  ledger_.nodes = {GpuNode("n1", 8, 2), GpuNode("n2", 8, 0)};
  ledger_.pods["ns/a-worker-0"] = Counted("n1", 2);
  QueueSnapshot s = Build();
  ASSERT_TRUE(s.jobs[0].placement);
  EXPECT_EQ(s.jobs[0].placement->worker_nodes, (Strings{"n1", "n2"}));
  EXPECT_EQ(s.nodes[0].used.gpus, 2);
  EXPECT_EQ(s.nodes[1].used.gpus, 2);  // the plan's worker 1, not yet in the ledger
  EXPECT_EQ(s.running, Strings{"ns/a"});

  // Past the TTL without a bound worker, it is planned again.
  QueueSnapshot later = Build(kNow + std::chrono::hours(1));
  EXPECT_FALSE(later.jobs[0].placement);
}

// A restarted (or resized) job admitted again: its old worker of the same name is still going,
// counted by the ledger. Its use is freed, so the new run's worker is counted at the plan, not
// taken for that pod (which would count it nowhere and show its GPUs free).
TEST_F(SnapshotTest, AWorkerOfTheRunBeforeStillGoingIsNotTakenForTheNewRunsWorker) {
  jobs_ = {JobObject("a", {}, {{"phase", "Restarting"}, {"restarts", 1}})};
  Json old = Pod("a-worker-0", "worker", "n1", "a");
  old["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  Json old1 = Pod("a-worker-1", "worker", "n1", "a");
  old1["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  pods_["ns/a"] = {old, old1};
  scheduler::Decision d;
  d.start.push_back({"ns/a", scheduler::Placement{{"n2", "n2"}}, false});
  book_.Record(d, {}, {}, kNow);
  ledger_.nodes = {GpuNode("n1", 8, 4), GpuNode("n2", 8, 0)};
  ledger_.pods["ns/a-worker-0"] = Counted("n1", 2);
  ledger_.pods["ns/a-worker-1"] = Counted("n1", 2);
  QueueSnapshot s = Build();
  ASSERT_TRUE(s.jobs[0].placement);
  EXPECT_EQ(s.jobs[0].placement->worker_nodes, (Strings{"n2", "n2"}));
  EXPECT_EQ(s.nodes[0].used.gpus, 0);  // the old run's pods: going
  EXPECT_EQ(s.nodes[1].used.gpus, 4);  // the new run, at its plan
}

TEST_F(SnapshotTest, AJobToBeSuspendedLeavesAndItsGpusCountAsFree) {
  jobs_ = {JobObject("low", {}, {{"phase", "Running"}})};
  pods_["ns/low"] = {Pod("low-worker-0", "worker", "n1", "low"),
                     Pod("low-worker-1", "worker", "n1", "low")};
  ledger_.nodes = {GpuNode("n1", 8, 4), GpuNode("n2", 8, 0)};
  ledger_.pods["ns/low-worker-0"] = Counted("n1", 2);
  ledger_.pods["ns/low-worker-1"] = Counted("n1", 2);
  scheduler::Decision d;
  d.preempt.push_back({"ns/low", "ns/high", "suspended for ns/high"});
  book_.Record(d, {}, {}, kNow);
  QueueSnapshot s = Build();
  EXPECT_TRUE(s.jobs.empty());
  EXPECT_EQ(s.leaving, Strings{"ns/low"});
  EXPECT_EQ(s.nodes[0].used.gpus, 0);

  // Suspended, but the cache still shows its pods: still leaving.
  book_.Preempted("ns/low", "suspended");
  EXPECT_EQ(Build().leaving, Strings{"ns/low"});
  // Its pods gone: it waits like any other job.
  pods_.clear();
  ledger_.pods.clear();
  QueueSnapshot gone = Build();
  EXPECT_TRUE(gone.leaving.empty());
  ASSERT_EQ(gone.jobs.size(), 1u);
  EXPECT_FALSE(gone.jobs[0].placement);
}

TEST_F(SnapshotTest, DefinedQueuesAndTheirStatuses) {
  queues_ = {
      {{"apiVersion", "dljob.io/v1alpha1"},
       {"kind", "DLQueue"},
       {"metadata", {{"name", "team-a"}}},
       {"spec",
        {{"cohort", "ml"},
         {"quotas",
          {{{"gpuProduct", "A100"}, {"nominal", 2}}, {{"nominal", 16}, {"borrowingLimit", 0}}}}}}},
      {{"apiVersion", "dljob.io/v1alpha1"},
       {"kind", "DLQueue"},
       {"metadata", {{"name", "idle"}}},
       {"spec", {{"quotas", {{{"nominal", 8}}}}}}}};
  jobs_ = {JobObject("a100",
                     {{"queue", "team-a"}, {"nodeSelector", {{"nvidia.com/gpu.product", "A100"}}}}),
           JobObject("any", {{"queue", "team-a"}}), JobObject("waits", {{"queue", "team-a"}})};
  pods_["ns/a100"] = {Pod("a100-worker-0", "worker", "n1", "a100"),
                      Pod("a100-worker-1", "worker", "n1", "a100")};
  QueueSnapshot s = Build();
  EXPECT_TRUE(s.queues_defined);
  ASSERT_EQ(s.queues.size(), 2u);
  EXPECT_EQ(s.queues[1].name, "team-a");
  EXPECT_EQ(s.queues[1].quotas.at("A100").nominal, 2);
  EXPECT_EQ(s.queues[1].quotas.at("A100").borrowing_limit, scheduler::kUnlimited);
  EXPECT_EQ(s.queues[1].quotas.at("").borrowing_limit, 0);
  EXPECT_EQ(s.queues[1].cohort, "ml");
  EXPECT_EQ(s.queues[0].cohort, "");  // idle names none: the default cohort

  scheduler::Decision d;
  d.start.push_back({"ns/any", scheduler::Placement{{"n2", "n2"}}, false});
  std::map<std::string, DLQueueStatus> statuses = QueueStatuses(s, d);
  const DLQueueStatus& a = statuses.at("team-a");
  EXPECT_EQ(a.running_jobs, 2);
  EXPECT_EQ(a.pending_jobs, 1);
  EXPECT_EQ(a.used, (std::vector<QueueUsage>{{"", 4}, {"A100", 4}}));
  EXPECT_EQ(a.borrowed, (std::vector<QueueUsage>{{"A100", 2}}));
  EXPECT_EQ(statuses.at("idle"), (DLQueueStatus{{}, {}, 0, 0}));
}

}  // namespace
}  // namespace dljob::controller
