#include "tests/operator/operator_kills.h"

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "tests/operator/e2e_jobs.h"

namespace dljob::testing {
namespace {

using kube::resources::kDLJobs;

std::string JobName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "crash-%03d", i);
  return buf;
}

void ExpectNoNodeOvercommitted(const std::vector<Json>& pods, int gpus_per_node) {
  for (const auto& [node, gpus] : GpusInUse(pods)) {
    EXPECT_LE(gpus, gpus_per_node) << "node " << node << " is overcommitted";
  }
}

}  // namespace

void SubmitJobsWhileKillingTheOperator(E2eCluster& cluster, const StartOperatorFn& start,
                                       const OperatorKills& run) {
  kube::Api& api = cluster.api();
  OperatorProcess* op = &start(run.operator_flags);
  std::atomic<int> submitted{0}, refused{0};
  std::thread submitter([&] {
    std::mt19937 rng(7);
    for (int i = 0; i < run.jobs; ++i) {
      Json job = cluster.NewJob(JobName(i), 2, 1, 0);
      job["spec"]["runPolicy"]["cleanPodPolicy"] = "None";  // every pod stays to be checked
      if (!api.Create(kDLJobs, Ns(), job).ok()) ++refused;
      ++submitted;
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % (run.submit_gap_ms + 1)));
    }
  });
  auto succeed = [](const std::string&) { return 0; };
  std::mt19937 rng(20240601);
  int kills = 0;
  while (submitted < run.jobs || kills < run.min_kills) {
    std::this_thread::sleep_for(
        std::chrono::milliseconds(run.kill_gap_ms / 10 + rng() % (run.kill_gap_ms + 1)));
    op->Kill();
    op->Wait(10000);
    ++kills;
    op = &start(run.operator_flags);
    if (std::optional<std::vector<Json>> pods = JobPods(api, "")) {
      EndRunningJobs(cluster, *pods, succeed);
      ExpectNoNodeOvercommitted(*pods, cluster.gpus());
    }
  }
  submitter.join();
  ASSERT_EQ(refused.load(), 0);

  int succeeded = 0;
  std::string behind;  // the jobs not Succeeded yet, described
  ASSERT_TRUE(WaitFor(
      [&] {
        std::optional<std::vector<Json>> pods = JobPods(api, "");
        if (!pods) return false;
        EndRunningJobs(cluster, *pods, succeed);
        kube::ApiResult<Json> jobs = kube::ListAll(api, kDLJobs, Ns());
        if (!jobs.ok()) return false;
        succeeded = 0;
        behind.clear();
        for (const Json& j : (*jobs)["items"]) {
          bool done = Phase(api, NameOf(j)) == "Succeeded";
          succeeded += done;
          if (!done) behind += "\n" + Describe(api, NameOf(j));
        }
        return succeeded == run.jobs;
      },
      2 * cluster.wait_ms()))
      << succeeded << " of " << run.jobs << " jobs succeeded after " << kills
      << " kills:" << behind;

  kube::ApiResult<Json> jobs = kube::ListAll(api, kDLJobs, Ns());
  ASSERT_TRUE(jobs.ok());
  std::map<std::string, std::string> job_uids;  // uid -> name
  for (const Json& j : (*jobs)["items"]) {
    job_uids[UidOf(j)] = NameOf(j);
    EXPECT_EQ(Restarts(j), 0) << NameOf(j) << " restarted: " << j["status"].dump();
  }
  // Every pod of the namespace, labelled or not: none may be a stray.
  kube::ApiResult<Json> all_pods = kube::ListAll(api, kube::resources::kPods, Ns());
  ASSERT_TRUE(all_pods.ok());
  std::vector<Json> pods = (*all_pods)["items"].get<std::vector<Json>>();
  std::map<std::string, std::map<std::string, int>> per_job;  // job -> role -> count
  for (const Json& p : pods) {
    auto owner = job_uids.find(OwnerUid(p));
    ASSERT_NE(owner, job_uids.end()) << "orphaned pod " << NameOf(p);
    EXPECT_EQ(JobOf(p), owner->second);
    EXPECT_FALSE(NodeNameOf(p).empty()) << NameOf(p) << " was never bound";
    EXPECT_EQ(Incarnation(p), 0) << NameOf(p);
    ++per_job[owner->second][Role(p)];
  }
  EXPECT_EQ(per_job.size(), static_cast<size_t>(run.jobs));
  for (const auto& [job, roles] : per_job) {
    EXPECT_EQ(roles, (std::map<std::string, int>{{"launcher", 1}, {"worker", 2}})) << job;
  }
  ExpectNoNodeOvercommitted(pods, cluster.gpus());
}

}  // namespace dljob::testing
