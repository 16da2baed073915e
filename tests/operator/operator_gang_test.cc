// dljob-operator end to end against dljob-test-apiserver: a gang's bind that fails half-way (the
// server's fault injection, on the pending workers of a job that waited for room) leaves no bound
// pod behind. Two gangs that would deadlock under
// pod-at-a-time scheduling, a deleted worker and a job waiting for GPUs run against both servers:
// shared_operator_test.cc, shared_job_life_test.cc, shared_queue_test.cc.
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;
using kube::resources::kPods;

// Every change to a job's pods from the moment it is made, as the server's watch reports them.
class PodHistory {
 public:
  struct Change {
    std::string type;  // ADDED, MODIFIED, DELETED
    std::string name;
    std::string uid;
    std::string node;
  };

  PodHistory(kube::Api& api, const std::string& job) : api_(api) {
    kube::ListOptions o;
    o.label_selector = "dljob.io/job-name=" + job;
    kube::ApiResult<Json> list = kube::ListAll(api, kPods, Ns(), o);
    EXPECT_TRUE(list.ok()) << list.error().ToString();
    if (!list.ok()) return;
    o.resource_version = (*list)["metadata"].value("resourceVersion", "");
    reader_ = std::thread([this, o]() mutable { Read(o); });
  }
  ~PodHistory() {
    stop_ = true;
    {
      MutexLock lock(mu_);
      if (stream_) stream_->Cancel();
    }
    if (reader_.joinable()) reader_.join();
  }
  std::vector<Change> changes() const {
    MutexLock lock(mu_);
    return changes_;
  }

 private:
  void Read(kube::ListOptions o) {
    while (!stop_) {
      kube::ApiResult<kube::WatchStreamPtr> w = api_.Watch(kPods, Ns(), o);
      if (!w.ok()) continue;
      {
        MutexLock lock(mu_);
        stream_ = w->get();
        if (stop_) stream_->Cancel();
      }
      while (!stop_) {
        kube::ApiResult<std::optional<kube::WatchEvent>> e = (*w)->Next();
        if (!e.ok() || !*e) break;  // ended or broken: watch again from the last version
        const Json& pod = (*e)->object;
        std::string rv = pod["metadata"].value("resourceVersion", "");
        if (!rv.empty()) o.resource_version = rv;
        const char* type = (*e)->type == kube::WatchEvent::Type::kAdded      ? "ADDED"
                           : (*e)->type == kube::WatchEvent::Type::kModified ? "MODIFIED"
                           : (*e)->type == kube::WatchEvent::Type::kDeleted  ? "DELETED"
                                                                             : "";
        if (*type == 0) continue;
        MutexLock lock(mu_);
        changes_.push_back({type, NameOf(pod), UidOf(pod), NodeNameOf(pod)});
      }
      MutexLock lock(mu_);
      stream_ = nullptr;
    }
  }

  kube::Api& api_;
  std::atomic<bool> stop_{false};
  mutable Mutex mu_;
  kube::WatchStream* stream_ GUARDED_BY(mu_) = nullptr;
  std::vector<Change> changes_ GUARDED_BY(mu_);
  std::thread reader_;
};

TEST_F(OperatorE2eTest, ABindFailingHalfWayLeavesNoBoundPodBehindAndTheJobStillRuns) {
  // The job (2 workers × 4 GPUs) waits for room first, so its workers are made pending and
  // bound later (a job that fits at once has its workers created bound: no bind to fail).
  StartCluster({.nodes = 1, .gpus_per_node = 4, .kubelet_delay_ms = 0});
  // The second worker's bind fails with 503 on each of its 3 attempts (a 4xx would fail the job:
  // operator_refusal_test.cc); the first one's lands.
  ASSERT_TRUE(
      control()
          .AddFault({"POST", "/api/v1/namespaces/default/pods/half-worker-1/binding", 503, 3})
          .ok());
  PodHistory history(api(), "half");
  StartOperator();
  ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob("half", 8, 4)).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<Json> job = GetJob(api(), "half");
        return job && Phase(api(), "half") == "Queued" && PhaseReason(*job) == "Unschedulable" &&
               Workers(api(), "half").size() == 2;
      },
      kWait))
      << Describe(api(), "half");
  ASSERT_TRUE(control().AddNode("roomy", 8).ok());
  ASSERT_TRUE(WaitForPhase(api(), "half", "Running", kWait)) << Describe(api(), "half");
  ASSERT_TRUE(Finish(control(), "half-launcher", 0).ok());
  ASSERT_TRUE(WaitForPhase(api(), "half", "Succeeded", kWait)) << Describe(api(), "half");
  EXPECT_EQ(Restarts(*GetJob(api(), "half")), 0);
  EXPECT_EQ(control().Info()->value("pendingFaults", -1), 0) << "the fault was never met";

  std::vector<Json> failed = EventsOf(api(), "half", "BindFailed");
  ASSERT_EQ(failed.size(), 1u) << Describe(api(), "half");
  EXPECT_EQ(failed[0].value("type", ""), "Warning");
  EXPECT_NE(
      failed[0].value("message", "").find("deleted the 1 worker bound so far (half-worker-0)"),
      std::string::npos)
      << failed[0].dump();

  // What the server saw: the first half-worker-0 was bound, then deleted before the job was
  // placed again; half-worker-1 was never bound in that attempt, so it stayed (same uid) and was
  // bound with the new half-worker-0.
  std::vector<PodHistory::Change> changes = history.changes();
  std::string first_uid, deleted_uid;
  std::map<std::string, std::set<std::string>> uids;  // pod → uids seen
  for (const PodHistory::Change& c : changes) {
    uids[c.name].insert(c.uid);
    if (c.name == "half-worker-0" && first_uid.empty()) first_uid = c.uid;
    if (c.name == "half-worker-0" && c.type == "DELETED" && deleted_uid.empty()) {
      deleted_uid = c.uid;
    }
  }
  EXPECT_FALSE(first_uid.empty());
  EXPECT_EQ(deleted_uid, first_uid) << "the half-worker-0 bound before the failure was not deleted";
  EXPECT_EQ(uids["half-worker-0"].size(), 2u);
  EXPECT_EQ(uids["half-worker-1"].size(), 1u);
  bool first_bound = false;
  for (const PodHistory::Change& c : changes) {
    if (c.uid == first_uid && c.type == "DELETED") break;
    first_bound = first_bound || (c.uid == first_uid && !c.node.empty());
    // Nothing else of the gang is bound while the first half-worker-0 is.
    EXPECT_TRUE(c.uid == first_uid || c.node.empty()) << c.name << " bound to " << c.node;
  }
  EXPECT_TRUE(first_bound) << "the fault did not hit half-way";
}

}  // namespace
}  // namespace dljob::testing
