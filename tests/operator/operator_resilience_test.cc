// dljob-operator end to end against dljob-test-apiserver when things go wrong around it: an
// operator SIGKILLed at random points while 100 jobs are submitted, and API faults (dropped
// watches, 410 after compaction, 409, 5xx, 429). Two replicas with leader election run against
// both servers: shared_operator_test.cc. Pods run by themselves (the server's simulated
// kubelet); the tests end launchers as the training would.
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "tests/operator/e2e_fixture.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

std::string JobName(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s-%03d", prefix, i);
  return buf;
}

// Ends every Running launcher among `pods` with the exit code `code_for(job)` says.
void FinishRunningLaunchers(const ControlClient& control, const std::vector<Json>& pods,
                            const std::function<int(const std::string& job)>& code_for) {
  for (const Json& p : pods) {
    if (Role(p) != "launcher" || PodPhase(p) != "Running" || IsDeleting(p)) continue;
    std::string job = p["metadata"]["labels"].value("dljob.io/job-name", "");
    (void)Finish(control, NameOf(p), code_for(job));
  }
}

// GPUs requested by live pods, per node.
std::map<std::string, int> GpusInUse(const std::vector<Json>& pods) {
  std::map<std::string, int> used;
  for (const Json& p : pods) {
    if (NodeOf(p).empty() || PodPhase(p) == "Succeeded" || PodPhase(p) == "Failed") continue;
    for (const Json& c : p["spec"]["containers"]) {
      Json limits = c.value("resources", Json::object()).value("limits", Json::object());
      if (limits.contains("nvidia.com/gpu")) {
        const Json& g = limits["nvidia.com/gpu"];
        used[NodeOf(p)] += g.is_number() ? g.get<int>() : std::stoi(g.get<std::string>());
      }
    }
  }
  return used;
}

// The controller ownerReference's uid ("" when none).
std::string OwnerUid(const Json& object) {
  for (const Json& r : object["metadata"].value("ownerReferences", Json::array())) {
    if (r.value("controller", false)) return r.value("uid", "");
  }
  return "";
}

TEST_F(OperatorE2eTest, OperatorKilledAtRandomPointsDuringHundredSubmissionsLeavesNoStrayPods) {
  constexpr int kJobs = 100;
  constexpr int kNodes = 25, kGpusPerNode = 8;  // exactly the 200 GPUs the jobs need
  StartCluster({.nodes = kNodes, .gpus_per_node = kGpusPerNode, .kubelet_delay_ms = 0});
  const std::vector<std::string> flags = {"--qps=1000", "--burst=2000"};
  OperatorProcess* op = &StartOperator(flags);

  std::atomic<int> submitted{0}, refused{0};
  std::thread submitter([&] {
    std::mt19937 rng(7);
    for (int i = 0; i < kJobs; ++i) {
      Json job = NewJob(JobName("crash", i), 2, 1);
      job["spec"]["runPolicy"]["cleanPodPolicy"] = "None";  // every pod stays to be checked
      if (!api().Create(kDLJobs, Ns(), job).ok()) ++refused;
      ++submitted;
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 40));
    }
  });
  auto succeed = [](const std::string&) { return 0; };
  std::mt19937 rng(20240601);
  int kills = 0;
  while (submitted < kJobs || kills < 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 900));
    op->Kill();
    op->Wait(10000);
    ++kills;
    op = &StartOperator(flags);
    if (std::optional<std::vector<Json>> pods = JobPods(api(), "")) {
      FinishRunningLaunchers(control(), *pods, succeed);
      for (const auto& [node, gpus] : GpusInUse(*pods)) {
        EXPECT_LE(gpus, kGpusPerNode) << "node " << node << " is overcommitted";
      }
    }
  }
  submitter.join();
  ASSERT_EQ(refused.load(), 0);

  int succeeded = 0;
  std::string behind;  // the jobs not Succeeded yet, described
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api(), "");
        if (!pods) return false;
        FinishRunningLaunchers(control(), *pods, succeed);
        kube::ApiResult<Json> jobs = kube::ListAll(api(), kDLJobs, Ns());
        if (!jobs.ok()) return false;
        succeeded = 0;
        behind.clear();
        for (const Json& j : (*jobs)["items"]) {
          bool done = j.value("status", Json::object()).value("phase", "") == "Succeeded";
          succeeded += done;
          if (!done) behind += "\n" + Describe(api(), NameOf(j));
        }
        return succeeded == kJobs;
      },
      2 * kWait))
      << succeeded << " of " << kJobs << " jobs succeeded after " << kills << " kills:" << behind;

  kube::ApiResult<Json> jobs = kube::ListAll(api(), kDLJobs, Ns());
  ASSERT_TRUE(jobs.ok());
  std::map<std::string, std::string> job_uids;  // uid -> name
  for (const Json& j : (*jobs)["items"]) {
    job_uids[UidOf(j)] = NameOf(j);
    EXPECT_EQ(Restarts(j), 0) << NameOf(j) << " restarted: " << j["status"].dump();
  }
  kube::ApiResult<Json> all_pods = kube::ListAll(api(), kube::resources::kPods, Ns());
  ASSERT_TRUE(all_pods.ok());
  std::map<std::string, std::map<std::string, int>> per_job;  // job -> role -> count
  for (const Json& p : (*all_pods)["items"]) {
    auto owner = job_uids.find(OwnerUid(p));
    ASSERT_NE(owner, job_uids.end()) << "orphaned pod " << NameOf(p);
    EXPECT_EQ(p["metadata"]["labels"].value("dljob.io/job-name", ""), owner->second);
    EXPECT_FALSE(NodeOf(p).empty()) << NameOf(p) << " was never bound";
    EXPECT_EQ(Incarnation(p), 0) << NameOf(p);
    ++per_job[owner->second][Role(p)];
  }
  EXPECT_EQ(per_job.size(), static_cast<size_t>(kJobs));
  for (const auto& [job, roles] : per_job) {
    EXPECT_EQ(roles, (std::map<std::string, int>{{"launcher", 1}, {"worker", 2}})) << job;
  }
  for (const auto& [node, gpus] : GpusInUse((*all_pods)["items"].get<std::vector<Json>>())) {
    EXPECT_LE(gpus, kGpusPerNode) << "node " << node << " is overcommitted";
  }
}

TEST_F(OperatorE2eTest, UnderInjectedFaultsEveryJobConvergesToTheRightStatus) {
  constexpr int kJobs = 12;
  StartCluster({.nodes = 4, .kubelet_delay_ms = 0});
  OperatorProcess& op = StartOperator();
  ASSERT_GT(op.MetricsPort(), 0) << op.Log();
  int batches = 0;
  auto inject = [&] {
    for (const Fault& f : std::vector<Fault>{
             {"POST", "/api/v1/namespaces/default/pods", 500, 2},  // creates and bindings
             {"PUT", "/apis/dljob.io/v1alpha1/namespaces/default/dljobs", 409, 2},  // status
             {"GET", "/api/v1", 503, 2},  // lists, watches, reads
             {"*", "/apis/dljob.io", 429, 1},
             {"POST", "/api/v1/namespaces/default/events", 500, 1},
         }) {
      EXPECT_TRUE(control().AddFault(f).ok());
    }
    ++batches;
  };
  // Every watch is cut and must re-open from a forgotten version (410: re-list), under faults.
  inject();
  ASSERT_TRUE(control().Compact().ok());
  ASSERT_TRUE(control().DropWatches().ok());
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE(api().Create(kDLJobs, Ns(), NewJob(JobName("fault", i), 2, 1)).ok());
  }
  // Even jobs' launchers succeed, odd ones' fail (backoffLimit 0: the job fails).
  auto exit_code = [](const std::string& job) { return std::stoi(job.substr(6)) % 2; };
  auto expected = [&](int i) { return i % 2 == 0 ? "Succeeded" : "Failed"; };

  int round = 0;
  int converging = kJobs;  // jobs not in their final phase yet, as the last round saw them
  std::string last;
  bool converged = WaitFor(
      [&] {
        ++round;
        // Every fifth round: dropped watches, sometimes after a compaction, and a new batch of
        // faults once most of the last one is used up (so they come steadily, never pile up),
        // while at least half of the jobs are still converging. The test's own reads use up part
        // of every batch, so with only a job or two left every retry of theirs would meet a
        // fault, each one doubling that job's backoff (5 ms x 2^failures) until its next retry
        // lies past this test's limit.
        if (round % 5 == 0) {
          Result<Json> info = control().Info();
          if (info.ok() && (*info).value("pendingFaults", 99) <= 2 && 2 * converging >= kJobs) {
            inject();
          }
          if (round % 10 == 0) {
            EXPECT_TRUE(control().Compact().ok());
          }
          EXPECT_TRUE(control().DropWatches().ok());
        }
        if (std::optional<std::vector<Json>> pods = JobPods(api(), "")) {
          FinishRunningLaunchers(control(), *pods, exit_code);
        }
        converging = 0;
        for (int i = 0; i < kJobs; ++i) {
          std::string phase = Phase(api(), JobName("fault", i));
          if (phase == expected(i)) continue;
          if (converging++ == 0) {
            last =
                JobName("fault", i) + " is " + phase + "; " + Describe(api(), JobName("fault", i));
          }
        }
        return converging == 0;
      },
      2 * kWait);
  ASSERT_TRUE(control().ClearFaults().ok());
  ASSERT_TRUE(converged) << last << " after " << round << " rounds, " << batches
                         << " batches of faults";
  EXPECT_NE(op.Log().find("injected fault"), std::string::npos)
      << "the operator never met a fault: the test proves nothing";
  for (int i = 0; i < kJobs; ++i) {
    Json job = *GetJob(api(), JobName("fault", i));
    EXPECT_EQ(Restarts(job), 0) << NameOf(job) << ": " << job["status"].dump();
    EXPECT_EQ(PhaseReason(job), i % 2 == 0 ? "Succeeded" : "BackoffLimitExceeded")
        << job["status"].dump();
  }
}

}  // namespace
}  // namespace dljob::testing
